// `npm run bench:chart`: the chart as users install it, on a real node (root; docs/control-plane.md "A real node"):
// from `helm install` to every pod Running, every ClusterLoop Ready and the first label written through the
// function's Service, then each kubeloop container's resident memory at rest (read from the host's /proc: the
// containers' processes are the host's too) and after labelling BENCH_PODS annotated pods (default 2,000, on the
// kwok nodes beside the real one; 0 skips). Prints figures; asserts none. Holds the machine's one real node.
import { readdirSync, readFileSync } from 'node:fs';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { FAKE_NODE_TAINT, PAUSE_IMAGE } from '../cli/cluster/real-node/node-config.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { helmInstall, NAMESPACE, startRealNodeWithImages } from '../test/support/real-node-chart.ts';
import { machineLoad, readProcess } from './process-figures.ts';
import { MiB } from './router-bench-kit.ts';

const POLL_MS = 250;
const PODS = Number(process.env.BENCH_PODS ?? 2000);
/** How long to wait for the chart to come up before giving up (a figure past it means something is broken). */
const LIMIT_MS = 300_000;

/** Resolves with the elapsed milliseconds since `since` once `probe` is true (polled every `pollMs`). */
async function timeUntil(what: string, since: number, probe: () => Promise<boolean>, limitMs = LIMIT_MS, pollMs = POLL_MS): Promise<number> {
  for (;;) {
    if (await probe().catch(() => false)) return performance.now() - since;
    if (performance.now() - since > limitMs) throw new Error(`${what}: not within ${limitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** kubeloop's node processes in the node's containers, by the command after cli/bin.js (router, webhook, function X). */
function kubeloopContainers(): { name: string; rss: number; peakRss: number }[] {
  const found: { name: string; rss: number; peakRss: number }[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    const argv = (() => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      } catch {
        return [];
      }
    })();
    // /nodejs/bin/node is the images' node (runtime-base.ts): host processes run another path.
    const bin = argv.indexOf('cli/bin.js');
    if (argv[0] !== '/nodejs/bin/node' || bin < 0) continue;
    const command = argv[bin + 1] === 'function' ? `function ${argv[bin + 2] ?? ''}` : (argv[bin + 1] ?? '?');
    const { rss, peakRss } = readProcess(Number(entry));
    found.push({ name: command, rss, peakRss });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** Creates PODS annotated pods on the kwok nodes (they tolerate the fake nodes' taint), waits until all are labelled. */
async function labelMany(kubeConfig: Parameters<typeof KubeClient.fromKubeConfig>[0]): Promise<void> {
  const client = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit: { qps: 500, burst: 500 } });
  try {
    const started = performance.now();
    const names = Array.from({ length: PODS }, (_, i) => `many-${i}`);
    const body = (name: string) => ({
      metadata: { name, labels: { bench: 'many' }, annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } },
      spec: { tolerations: [{ ...FAKE_NODE_TAINT, operator: 'Equal' }], containers: [{ name: 'main', image: PAUSE_IMAGE }] },
    });
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => client.request({ method: 'POST', path: '/api/v1/namespaces/default/pods', body: body(name) })));
    }
    const labelled = await timeUntil(`${PODS} pods labelled`, started, async () => {
      const list = await client.request<{ items: { metadata: { labels?: Record<string, string> } }[] }>({ path: '/api/v1/namespaces/default/pods', query: { labelSelector: 'bench=many' } });
      return list.items.filter((p) => p.metadata.labels?.['kubeloop.dev/pod-name']).length === PODS;
    }, 900_000, 2000);
    console.log(`${PODS} annotated pods created and labelled: ${(labelled / 1000).toFixed(1)} s`);
    console.log(`resident memory now and its peak, with ${PODS} more pods:`);
    for (const c of kubeloopContainers()) console.log(`  ${c.name.padEnd(34)} ${(c.rss / MiB).toFixed(1)} MiB (peak ${(c.peakRss / MiB).toFixed(1)} MiB)`);
  } finally {
    await client.close();
  }
}

const plane = await startRealNodeWithImages();
try {
  const kc = plane.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const objects = kc.makeApiClient(CustomObjectsApi);
  console.log(`machine load: ${machineLoad()}`);
  const started = performance.now();
  await helmInstall(plane);
  const helmMs = performance.now() - started;
  // Created at once: labelled as soon as the router, its Loop and the function are all up.
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'first-label', annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } },
      spec: { containers: [{ name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never' }] },
    },
  });
  const [runningMs, loopsMs, labelMs] = await Promise.all([
    timeUntil('every pod Running and Ready', started, async () => {
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items;
      return pods.length > 0 && pods.every((p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }),
    timeUntil('every ClusterLoop Ready', started, async () => {
      const loops = (await objects.listClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusterloops' })) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
      return loops.items.length > 0 && loops.items.every((l) => l.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }),
    timeUntil('the first label', started, async () => (await core.readNamespacedPod({ name: 'first-label', namespace: 'default' })).metadata?.labels?.['kubeloop.dev/pod-name'] === 'first-label'),
  ]);
  const pods = (await core.listNamespacedPod({ namespace: NAMESPACE })).items.length;
  console.log(`helm install (objects created, no --wait): ${(helmMs / 1000).toFixed(1)} s`);
  console.log(`every pod of the release Running and Ready (${pods} pods): ${(runningMs / 1000).toFixed(1)} s after helm install started`);
  console.log(`every ClusterLoop Ready: ${(loopsMs / 1000).toFixed(1)} s`);
  console.log(`first label (a pod created right after helm install): ${(labelMs / 1000).toFixed(1)} s`);
  // At rest: 30 s after the label, the start-up's garbage collected or not, as users would see it.
  await new Promise((resolve) => setTimeout(resolve, 30_000));
  console.log('resident memory at rest, per container process (from the host /proc):');
  for (const c of kubeloopContainers()) console.log(`  ${c.name.padEnd(34)} ${(c.rss / MiB).toFixed(1)} MiB`);
  if (PODS > 0) await labelMany(plane.kubeConfig());
  console.log(`machine load: ${machineLoad()}`);
} finally {
  await plane.stop();
}
