// Preloaded (`node --import`) into bench children when BENCH_LOOP_PROBE=<dir>: the stalls of their event loop at 1 ms
// resolution (the router's own metric samples every 100 ms, too coarse for stalls of 10-80 ms). On SIGUSR2 the child
// writes what it saw since the last signal to <dir>/<pid>.json and starts over (loop-probe-reader.ts reads it).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STALL_THRESHOLDS_MS, type LoopStalls } from './loop-probe-reader.ts';

const dir = process.env.BENCH_LOOP_PROBE;
if (dir) {
  const fresh = (): LoopStalls => ({ seconds: 0, over: STALL_THRESHOLDS_MS.map(() => 0), stalledMs: 0, maxMs: 0 });
  let stalls = fresh();
  let since = performance.now();
  let last = since;
  // A 1 ms timer: a gap longer than that is the loop held by something else (a task, GC), less the timer's own 1 ms.
  setInterval(() => {
    const now = performance.now();
    const late = now - last - 1;
    last = now;
    if (late < STALL_THRESHOLDS_MS[0]!) return;
    STALL_THRESHOLDS_MS.forEach((threshold, i) => {
      if (late >= threshold) stalls.over[i]! += 1;
    });
    stalls.stalledMs += late;
    stalls.maxMs = Math.max(stalls.maxMs, late);
  }, 1).unref();
  process.on('SIGUSR2', () => {
    const now = performance.now();
    stalls.seconds = (now - since) / 1000;
    const file = join(dir, `${process.pid}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(stalls));
    renameSync(`${file}.tmp`, file);
    stalls = fresh();
    since = now;
  });
}
