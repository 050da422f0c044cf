// Warm start time, memory and stop time of the local control plane (binaries already built).
// Prints per-run figures, the median, and the ratio of the median start to the 15 s target.
// Run: npx tsx bench/control-plane.bench.ts [runs=3]
import { readFileSync } from 'node:fs';
import { startControlPlane } from '../cli/cluster/index.ts';

const TARGET_START_S = 15;
const runs = Number(process.argv[2] ?? 3);

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const starts: number[] = [];
const apiserverReady: number[] = [];
const stops: number[] = [];
for (let i = 0; i < runs; i += 1) {
  const t0 = Date.now();
  let apiAt = 0;
  const plane = await startControlPlane({
    onProgress: (line) => {
      if (line.startsWith('starting kube-controller-manager')) apiAt = Date.now();
    },
  });
  const start = (Date.now() - t0) / 1000;
  starts.push(start);
  apiserverReady.push((apiAt - t0) / 1000);
  // Let the controllers settle before reading memory.
  await new Promise((r) => setTimeout(r, 5000));
  const rss = Object.entries(plane.pids()).map(([name, pid]) => [name, rssMiB(pid)] as const);
  const total = rss.reduce((sum, [, mib]) => sum + mib, 0);
  const t1 = Date.now();
  await plane.stop();
  stops.push((Date.now() - t1) / 1000);
  console.log(
    `run ${i + 1}: ready in ${start.toFixed(1)}s (etcd+apiserver ${apiserverReady[i]?.toFixed(1)}s), stop ${stops[i]?.toFixed(1)}s, ` +
      `RSS ${total.toFixed(0)} MiB (${rss.map(([n, m]) => `${n} ${m.toFixed(0)}`).join(', ')})`,
  );
}
const m = median(starts);
console.log(`median start ${m.toFixed(1)}s, etcd+apiserver ${median(apiserverReady).toFixed(1)}s, stop ${median(stops).toFixed(1)}s; ratio to the ${TARGET_START_S}s target: ${(m / TARGET_START_S).toFixed(2)}`);
