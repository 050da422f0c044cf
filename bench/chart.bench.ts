// `npm run bench:chart`: the chart as users install it, on a real node (root; docs/control-plane.md "A real node"):
// from `helm install` to every pod Running, every ClusterLoop Ready and the first label written through the
// function's Service, then each kubeloop container's resident memory at rest (read from the host's /proc: the
// containers' processes are the host's too). Prints figures; asserts none. Holds the machine's one real node.
import { readdirSync, readFileSync } from 'node:fs';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { PAUSE_IMAGE } from '../cli/cluster/real-node/node-config.ts';
import { helmInstall, NAMESPACE, startRealNodeWithImages } from '../test/real-node/chart-install.ts';
import { machineLoad, readProcess } from './process-figures.ts';
import { MiB } from './router-bench-kit.ts';

const POLL_MS = 250;
/** How long to wait for the chart to come up before giving up (a figure past it means something is broken). */
const LIMIT_MS = 300_000;

/** Resolves with the elapsed milliseconds since `since` once `probe` is true (polled every 250 ms). */
async function timeUntil(what: string, since: number, probe: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await probe().catch(() => false)) return performance.now() - since;
    if (performance.now() - since > LIMIT_MS) throw new Error(`${what}: not within ${LIMIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** kubeloop's node processes in the node's containers, by the command after cli/bin.js (router, webhook, function X). */
function kubeloopContainers(): { name: string; rss: number }[] {
  const found: { name: string; rss: number }[] = [];
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
    found.push({ name: command, rss: readProcess(Number(entry)).rss });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
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
  console.log(`machine load: ${machineLoad()}`);
} finally {
  await plane.stop();
}
