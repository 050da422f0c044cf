// npx tsx bench/own-apply.bench.ts: function calls per object for a Loop whose function server-side applies its
// own primary (a label copying the ConfigMap's data), with this tree's router and, when BENCH_BASELINE_TREE names
// another checkout (with node_modules), that tree's router, on one private control plane in one run, rounds
// alternating (BENCH_ROUNDS, 2). BENCH_OBJECTS (200) ConfigMaps created, then each changed once; prints calls per object and the
// router's CPU per object for both steps.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startControlPlane } from '../cli/cluster/index.ts';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { serveFunction } from '../lib/runtime/index.ts';
import { defineFunction, respond } from '../lib/sdk/index.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { machineLoad } from './process-figures.ts';
import { createNamespace, pool, ROOT, spawnRouter, until, type ChildCode, type RouterChild } from './router-bench-kit.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const STAMP = 'kubeloop.dev/stamp';
const trees = [{ label: 'this tree', root: ROOT }, ...(process.env.BENCH_BASELINE_TREE ? [{ label: 'baseline', root: process.env.BENCH_BASELINE_TREE }] : [])];
const commitOf = (root: string) => execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

/** Runs a tree's own bench/router-bench-router.ts through tsx: the router exactly as that tree has it. */
const sourceOf = (root: string): ChildCode => ({ command: (entry) => ({ execArgv: ['--import', 'tsx'], script: join(root, `bench/${entry}.ts`), env: {} }), dispose: async () => {} });

const calls = new Map<string, number>();
const stamper = defineFunction({
  name: 'stamper',
  reconcile: (request: ReconcileRequest) => {
    const cm = request.object as V1ConfigMap & ReconcileRequest['object'];
    const name = cm.metadata?.name ?? '';
    const ns = cm.metadata?.namespace ?? '';
    calls.set(ns, (calls.get(ns) ?? 0) + 1);
    return respond([{ op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: cm.metadata?.namespace ?? '', labels: { [STAMP]: cm.data?.value ?? 'none' } } } }]);
  },
});

const plane = await startControlPlane({ nodes: 1, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) });
const served = await serveFunction(stamper, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 } });
type Step = { calls: number; cpuMs: number; objects: number };
const totals = new Map<string, { created: Step; changed: Step }>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) {
      const namespace = `own-apply-${round}-${tree.label.replace(/\W/g, '')}`;
      await createNamespace(client, namespace);
      const router = await spawnRouter(sourceOf(tree.root), {
        kubeconfigPath: plane.kubeconfigPath,
        invoke: 'http',
        loops: [
          {
            apiVersion: 'kubeloop.dev/v1alpha1',
            kind: 'ClusterLoop',
            metadata: { name: 'stamper', generation: 1 },
            spec: { serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT }, namespaces: [namespace], for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { role: 'stamped' } }, function: { url: served.url } },
          },
        ],
      });
      try {
        const total = totals.get(tree.label) ?? { created: { calls: 0, cpuMs: 0, objects: 0 }, changed: { calls: 0, cpuMs: 0, objects: 0 } };
        totals.set(tree.label, total);
        const cms = `/api/v1/namespaces/${namespace}/configmaps`;
        await measure(router, namespace, 'a', total.created, () =>
          pool(0, OBJECTS, 16, async (i) => void (await client.request({ method: 'POST', path: cms, body: { metadata: { name: `cm-${i}`, labels: { role: 'stamped' } }, data: { value: 'a' } } }))),
        );
        await measure(router, namespace, 'b', total.changed, () =>
          pool(0, OBJECTS, 16, async (i) => void (await client.request({ method: 'PATCH', path: `${cms}/cm-${i}`, contentType: 'application/merge-patch+json', body: { data: { value: 'b' } } }))),
        );
      } finally {
        await router.stop();
      }
    }
  }
  console.log(`\nA function that server-side applies its own primary: ${OBJECTS} ConfigMaps x ${ROUNDS} rounds per router, alternating (${machineLoad()})`);
  console.log('  router                 calls / created object   calls / changed object   router CPU ms / object (created, changed)');
  for (const tree of trees) {
    const t = totals.get(tree.label)!;
    const per = (step: Step, value: number) => (value / step.objects).toFixed(2);
    console.log(`  ${`${tree.label} ${commitOf(tree.root)}`.padEnd(21)}  ${per(t.created, t.created.calls).padStart(22)}   ${per(t.changed, t.changed.calls).padStart(22)}   ${per(t.created, t.created.cpuMs)}, ${per(t.changed, t.changed.cpuMs)}`);
  }
} finally {
  await client.close();
  await served.close();
  await plane.stop();
}

/**
 * Runs one step, waits until every object carries the stamp `value` and the router has nothing left to do (its
 * queue empty and the call count still for a second: the follow-up of the last apply is in), and adds it up.
 */
async function measure(router: RouterChild, namespace: string, value: string, step: Step, act: () => Promise<void>): Promise<void> {
  const before = { calls: calls.get(namespace) ?? 0, cpu: await router.stats() };
  await act();
  await until(`every ConfigMap of ${namespace} stamped ${value}`, 300_000, async () => {
    const list = await client.request<{ items: V1ConfigMap[] }>({ path: `/api/v1/namespaces/${namespace}/configmaps`, query: { labelSelector: `${STAMP}=${value}` } });
    return list.items.length === OBJECTS;
  }, 250);
  let last = -1;
  await until(`the router of ${namespace} idle`, 120_000, async () => {
    const [now, stats] = [calls.get(namespace) ?? 0, await router.stats()];
    const idle = now === last && stats.pending === 0;
    last = now;
    return idle;
  }, 1000);
  const after = await router.stats();
  step.calls += (calls.get(namespace) ?? 0) - before.calls;
  step.cpuMs += (after.cpuUserMicros + after.cpuSystemMicros - before.cpu.cpuUserMicros - before.cpu.cpuSystemMicros) / 1000;
  step.objects += OBJECTS;
}
