// npx tsx bench/reconcile-trace.bench.ts: the router's tracing cost per reconcile, in one process with no
// cluster: a reconcile's trace (root span from its watch events, queue, call with its traceparent, one API
// write, the decision) with tracing off and on at 10 % sampling (BENCH_TRACE_SAMPLING; OTLP to a local sink),
// alternating rounds; prints CPU per reconcile of each and what tracing adds. The flight recorder is off here.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { startTracing } from '../lib/observability/tracing.ts';
import { watchEvent, ReconcileTrace } from '../router/index.ts';

const RECONCILES = Number(process.env.BENCH_RECONCILES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLING = Number(process.env.BENCH_TRACE_SAMPLING ?? 0.1);

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'default', resourceVersion: '42', uid: 'u' } };
const request = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'pod-name-label', reconcileId: 'r', trigger: { type: 'MODIFIED' }, object: pod, children: {}, now: '' } as unknown as ReconcileRequest;
const patch = { op: 'patch' as const, target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-1' }, patch: [] };

/** CPU microseconds per reconcile over `n` reconciles: what the router does for tracing around one call and one write. */
function run(n: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const traced = new ReconcileTrace('pod-name-label', 'default/web-1', [watchEvent('primary', 'MODIFIED', pod)], performance.now() - 1, undefined);
    const call = traced.startCall(request, 'http://127.0.0.1:8080/');
    traced.endCall(call.span, { kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [patch] } } as never, 1);
    traced.begin(patch).end({ result: 'applied', status: 200 } as never);
    traced.finish('ok', 'forget');
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const sink = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()));
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
const off: number[] = [];
const on: number[] = [];
run(RECONCILES / 10);
for (let round = 0; round < ROUNDS; round++) {
  off.push(run(RECONCILES));
  const tracing = await startTracing({ otlpEndpoint: endpoint, otlpHeaders: {}, samplingRatio: SAMPLING }, 'kubeloop-router');
  run(RECONCILES / 10);
  on.push(run(RECONCILES));
  // The export of what was sampled is part of the cost: flushed before the round's CPU is read... and counted.
  const before = process.cpuUsage();
  await tracing.shutdown();
  const flush = process.cpuUsage(before);
  on[on.length - 1]! += (flush.user + flush.system) / RECONCILES;
}
sink.close();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`reconcile trace, ${RECONCILES} reconciles x ${ROUNDS} rounds: off ${mean(off).toFixed(2)} us, on at ${SAMPLING * 100} % ${mean(on).toFixed(2)} us per reconcile (+${(mean(on) - mean(off)).toFixed(2)} us)`);
console.log(`  rounds off: ${off.map((x) => x.toFixed(2)).join(' ')}; on: ${on.map((x) => x.toFixed(2)).join(' ')}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`);
