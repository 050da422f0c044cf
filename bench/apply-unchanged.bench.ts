// npx tsx bench/apply-unchanged.bench.ts: what a reconcile whose answer did not change costs the router's write
// path, with the memory of applies (router/apply/applied-writes.ts, the default) against without it (capacity 0:
// every apply sent, the behaviour before), in one process and one run on a private control plane, rounds
// alternating. BENCH_OBJECTS (200) primaries, each answered with the same server-side apply of an owned Secret
// BENCH_ROUNDS (6) times per variant; the router's cache is stood in for by what each apply answered (the
// object the watch would show). Prints API requests and client CPU per reconcile.
import { pino } from 'pino';
import { startControlPlane } from '../cli/cluster/index.ts';
import type { KubeObject } from '../lib/contract/types.ts';
import { ResourceDiscovery } from '../lib/kube/discovery.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { applyActions, type ApplyContext, AppliedWrites, type EventRecorder, Expectations, parseLoop, createRouterMetrics } from '../router/index.ts';
import { machineLoad } from './process-figures.ts';
import { pool } from './router-bench-kit.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const NAMESPACE = 'apply-bench';
type Variant = 'memory (default)' | 'no memory (before)';

const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
try {
  let requests = 0;
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 }, onRequest: () => void requests++ });
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NAMESPACE } } });
  const primaries: KubeObject[] = [];
  await pool(0, OBJECTS, 16, async (i) => {
    primaries[i] = await client.request<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body: { metadata: { name: `cm-${i}` }, data: { setting: String(i) } } });
  });
  const loop = parseLoop({
    metadata: { name: 'copier' },
    spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, owns: [{ apiVersion: 'v1', kind: 'Secret' }], serviceAccount: { namespace: NAMESPACE, name: 'copier' }, function: { url: 'http://fn.x.svc/' } },
  });
  const discovery = new ResourceDiscovery(client);
  const metrics = createRouterMetrics();
  const expectations = new Expectations(60_000);
  const events = { record: () => {} } as unknown as EventRecorder;
  const logger = pino({ level: 'silent' });
  // The stand-in cache: what each apply answered, by Secret name.
  const cache = new Map<string, KubeObject>();
  const memories: Record<Variant, AppliedWrites> = { 'memory (default)': new AppliedWrites(), 'no memory (before)': new AppliedWrites(0) };
  const reconcileAll = async (variant: Variant) => {
    await pool(0, OBJECTS, 16, async (i) => {
      const primary = primaries[i]!;
      const ctx: ApplyContext = {
        client: { request: async (r: Parameters<KubeClient['request']>[0]) => {
          const answer = await client.request<KubeObject>(r);
          if (r.method === 'PATCH' && answer?.metadata?.name) cache.set(answer.metadata.name, answer);
          return answer;
        } } as unknown as KubeClient,
        discovery,
        loop,
        primary,
        ownerKey: `${NAMESPACE}/cm-${i}`,
        lookup: (_apiVersion, kind, _namespace, name) => (kind === 'Secret' ? cache.get(name) : undefined),
        expectations,
        events,
        metrics,
        logger,
        appliedWrites: memories[variant],
      };
      const outcome = await applyActions(ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `cm-${i}-copy` }, data: { setting: Buffer.from(String(i)).toString('base64') } } }]);
      if (outcome.result !== 'done') throw new Error(`apply of cm-${i}: ${JSON.stringify(outcome)}`);
    });
  };
  // Every child exists and each variant has seen it once (its first apply is always sent).
  for (const variant of Object.keys(memories) as Variant[]) await reconcileAll(variant);
  const totals: Record<Variant, { requests: number; cpuMs: number; reconciles: number }> = {
    'memory (default)': { requests: 0, cpuMs: 0, reconciles: 0 },
    'no memory (before)': { requests: 0, cpuMs: 0, reconciles: 0 },
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order: Variant[] = round % 2 === 0 ? ['no memory (before)', 'memory (default)'] : ['memory (default)', 'no memory (before)'];
    for (const variant of order) {
      const before = { requests, cpu: process.cpuUsage() };
      await reconcileAll(variant);
      const cpu = process.cpuUsage(before.cpu);
      totals[variant].requests += requests - before.requests;
      totals[variant].cpuMs += (cpu.user + cpu.system) / 1000;
      totals[variant].reconciles += OBJECTS;
    }
  }
  console.log(`\nA reconcile whose answer (a server-side apply of its owned Secret) did not change: ${OBJECTS} objects x ${ROUNDS} rounds per variant, alternating`);
  console.log('  variant               API requests / reconcile   client CPU us / reconcile');
  for (const [variant, t] of Object.entries(totals)) {
    console.log(`  ${variant.padEnd(20)}  ${(t.requests / t.reconciles).toFixed(2).padStart(24)}   ${((t.cpuMs * 1000) / t.reconciles).toFixed(0).padStart(25)}`);
  }
  const on = totals['memory (default)'];
  const off = totals['no memory (before)'];
  console.log(`  memory / before: CPU ${(on.cpuMs / off.cpuMs).toFixed(2)}x, requests ${(on.requests / Math.max(1, off.requests)).toFixed(2)}x (${machineLoad()})`);
  await client.close();
} finally {
  await plane.stop();
}
