// npx tsx bench/own-write-intake.bench.ts: the router's CPU for the watch event its own patch of a primary causes,
// in one process with no cluster. A LoopRunner on in-memory informers (a metadata-only pod Loop, as pod-name-label)
// labels BENCH_OWN_WRITE_PODS pods through an in-memory function and API; then each pod's own-write event is
// delivered and the CPU until the runner is idle again is counted, per event. BENCH_BASELINE_TREE=<another checkout>
// loads that checkout's LoopRunner into the same process, rounds alternating: before and after in one run. The first
// pass (each pod reconciled, called and patched once, in memory) is reported per pod too: the router's in-process share.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { CONTRACT_API_VERSION, type KubeObject, type ReconcileRequest } from '../lib/contract/types.ts';
import { ROOT } from './router-bench-kit.ts';
import { jsonAnswering } from '../test/support/json-writes-client.ts';

const PODS = Number(process.env.BENCH_OWN_WRITE_PODS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const trees = [{ label: 'this tree', root: ROOT }, ...(process.env.BENCH_BASELINE_TREE ? [{ label: 'baseline', root: process.env.BENCH_BASELINE_TREE }] : [])];

/** The modules a tree's runner is built from (each tree's own, so the baseline runs its own code). */
async function load(root: string) {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  return {
    ...((await from('router/intake/loop-runner.ts')) as typeof import('../router/intake/loop-runner.ts')),
    ...((await from('router/base/loop-spec.ts')) as typeof import('../router/base/loop-spec.ts')),
    ...((await from('router/base/router-metrics.ts')) as typeof import('../router/base/router-metrics.ts')),
    ...((await from('router/base/fair-scheduler.ts')) as typeof import('../router/base/fair-scheduler.ts')),
    ...((await from('router/reconcile/flight-recorder.ts')) as typeof import('../router/reconcile/flight-recorder.ts')),
    ...((await from('lib/observability/metrics.ts')) as typeof import('../lib/observability/metrics.ts')),
    ...((await from('test/support/memory-informers.ts')) as typeof import('../test/support/memory-informers.ts')),
  };
}

const pod = (i: number, resourceVersion: number, labelled: boolean): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'bench', name: `web-${i}`, uid: `uid-${i}`, resourceVersion: String(resourceVersion), annotations: { 'kubeloop.dev/add-pod-name-label': 'true' }, ...(labelled ? { labels: { 'kubeloop.dev/pod-name': `web-${i}` } } : {}) },
});

const idle = async (runner: { stats(): { pendingKeys: number } }) => {
  while (runner.stats().pendingKeys > 0) await new Promise((resolve) => setImmediate(resolve));
};

/** CPU microseconds per pod of the first labelling pass and per own-write event after it, for one tree. */
async function round(m: Awaited<ReturnType<typeof load>>): Promise<{ label: number; ownWrite: number }> {
  const informers = new m.MemoryInformers([m.TEST_RESOURCES.pods]);
  const loop = m.parseLoop({ kind: 'ClusterLoop', metadata: { name: 'pod-name-label' }, spec: { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, serviceAccount: { namespace: 'bench', name: 's' }, function: { url: 'http://pod-name-label.bench.svc:8080/' } } });
  const metrics = m.createRouterMetrics(m.createMetricsRegistry({ defaultMetrics: false }));
  let calls = 0;
  const runner = new m.LoopRunner(loop, {
    registry: informers,
    // The function labels the pod; the API answers the patch with the next resourceVersion.
    invoke: async (request: ReconcileRequest) => {
      calls += 1;
      const name = request.object.metadata!.name!;
      return { kind: 'ok' as const, status: 200, response: { apiVersion: CONTRACT_API_VERSION, kind: 'ReconcileResponse' as const, actions: [{ op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'bench', name }, patch: [{ op: 'add', path: '/metadata/labels', value: { 'kubeloop.dev/pod-name': name } }] }] } };
    },
    // A JSON patch's reply is read as bytes (router/apply/json-patch.ts): a client without requestBytes failed every patch.
    client: jsonAnswering(() => ({ metadata: { resourceVersion: '2' } })),
    discovery: { resolve: async () => m.TEST_RESOURCES.pods } as never,
    events: { record: () => {} } as never,
    metrics,
    logger: pino({ level: 'silent' }),
    history: new m.FlightRecorder(),
    scheduler: new m.FairScheduler({ capacity: 64, weightOf: () => 1 }),
  });
  const pods = informers.of('v1', 'Pod');
  for (let i = 0; i < PODS; i++) pods.put(pod(i, 1, false));
  await runner.start();
  const first = process.cpuUsage();
  pods.sync();
  await runner.synced;
  while (calls < PODS) await new Promise((resolve) => setImmediate(resolve));
  await idle(runner);
  const labelling = process.cpuUsage(first);
  const before = process.cpuUsage();
  for (let i = 0; i < PODS; i++) pods.put(pod(i, 2, true));
  await idle(runner);
  const used = process.cpuUsage(before);
  if (calls !== PODS) throw new Error(`${calls - PODS} own-write events were sent to the function`);
  await runner.stop();
  return { label: (labelling.user + labelling.system) / PODS, ownWrite: (used.user + used.system) / PODS };
}

const modules = await Promise.all(trees.map((t) => load(t.root)));
const results = trees.map(() => [] as number[]);
const labelled = trees.map(() => [] as number[]);
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const [i, m] of (r % 2 === 0 ? [...modules.entries()] : [...modules.entries()].reverse())) {
    const us = await round(m);
    if (r > 0) results[i]!.push(us.ownWrite); // the first round warms up
    if (r > 0) labelled[i]!.push(us.label);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`own-write events: ${PODS} pods x ${ROUNDS} rounds, load average ${loadavg()[0]!.toFixed(1)}`);
for (const [i, t] of trees.entries()) console.log(`  ${t.label.padEnd(10)} ${median(results[i]!).toFixed(1)} us CPU per event (median; rounds ${results[i]!.map((x) => x.toFixed(1)).join(', ')})`);
if (trees.length === 2) console.log(`  this tree / baseline: ${(median(results[0]!) / median(results[1]!)).toFixed(2)}x`);
console.log('first labelling pass (reconcile, in-memory call and patch):');
for (const [i, t] of trees.entries()) console.log(`  ${t.label.padEnd(10)} ${median(labelled[i]!).toFixed(1)} us CPU per pod (median; rounds ${labelled[i]!.map((x) => x.toFixed(1)).join(', ')})`);
if (trees.length === 2) console.log(`  this tree / baseline: ${(median(labelled[0]!) / median(labelled[1]!)).toFixed(2)}x`);
