// npx tsx bench/json-size.bench.ts: what measuring a cached pod's JSON size costs (the request-size check of every
// call, router/reconcile/call-rounds.ts): the walk (jsonByteSize) against V8's serialiser (cachedJsonSize's), on
// fresh copies of recorded pods, the first pass apart (the router measures each primary once, mostly cold).
import { loadavg } from 'node:os';
import { recordedPod } from './recorded-pod-watch.ts';
import { jsonByteSize } from '../lib/contract/json-size.ts';

const PODS = Number(process.env.BENCH_PODS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const native = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
const ways = { walk: jsonByteSize, native } as const;

/** CPU microseconds per pod of one pass over fresh copies (nothing memoised between passes). */
function pass(measure: (value: unknown) => number): number {
  const pods = Array.from({ length: PODS }, (_, i) => JSON.parse(JSON.stringify(recordedPod(i, 3, 1000 + i))) as unknown);
  const before = process.cpuUsage();
  let bytes = 0;
  for (const pod of pods) bytes += measure(pod);
  const used = process.cpuUsage(before);
  if (bytes === 0) throw new Error('nothing measured');
  return (used.user + used.system) / PODS;
}

const results: Record<keyof typeof ways, number[]> = { walk: [], native: [] };
// Alternating rounds; the first pass of each way is its cold one.
for (let round = 0; round < ROUNDS; round++) for (const name of Object.keys(ways) as Array<keyof typeof ways>) results[name].push(pass(ways[name]));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of Object.keys(ways) as Array<keyof typeof ways>) {
  const [cold, ...warm] = results[name];
  console.log(`${name.padEnd(7)} first pass ${cold!.toFixed(1)} us/pod, warm median ${median(warm).toFixed(1)} us/pod (${warm.map((v) => v.toFixed(1)).join(', ')})`);
}
console.log(`native / walk: first pass ${(results.native[0]! / results.walk[0]!).toFixed(2)}x, warm ${(median(results.native.slice(1)) / median(results.walk.slice(1))).toFixed(2)}x; load ${loadavg()[0]!.toFixed(1)}`);
