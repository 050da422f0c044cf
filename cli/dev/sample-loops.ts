// The seeds' Loops for `kubeloop dev` (and the soak): samples/loops pointed at the local functions, signed as
// the chart signs them, optionally run as a tenant's namespaced Loops.
import { join } from 'node:path';
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { packageRoot } from '../package-root.ts';
import { identityOf } from '../scoped-names.ts';
import { applyManifest, ensureNamespace, readManifests, type Manifest } from './apply-manifests.ts';
import { signingManifests, type SignedLoop } from './dev-signing.ts';
import { namespacedSampleLoop } from './namespaced-sample.ts';
import { localLoop } from './project-function.ts';

const REPO = packageRoot();

type LoopManifest = Parameters<typeof localLoop>[0];

/**
 * The Loops of samples/loops pointed at local function URLs (by Loop name; a Loop without one is skipped),
 * each after its ServiceAccount and RBAC so the router finds them when it reviews the Loop's access.
 * With signingKey, a Loop whose function has a key is signed: its Secret and the Role reading it first (dev-signing.ts).
 * With namespaced, the named Loops run as namespaced Loops of that namespace (namespaced-sample.ts).
 * Returns the identities of the Loops applied. Also used by the soak (test/soak).
 */
export async function applySampleLoops(
  client: KubeClient,
  discovery: ResourceDiscovery,
  functionUrl: (loop: string) => string | undefined,
  say: (line: string) => void,
  signingKey: (loop: string) => string | undefined = () => undefined,
  namespaced?: { namespace: string; loops: ReadonlySet<string> },
): Promise<string[]> {
  const loopManifests = await readManifests(join(REPO, 'samples', 'loops'));
  const clusterRoleRules = (name: string) => (loopManifests.find(({ manifest: m }) => m.kind === 'ClusterRole' && m.metadata.name === name)?.manifest.rules as unknown[] | undefined) ?? [];
  for (const { manifest } of loopManifests.filter(({ manifest }) => manifest.kind !== 'ClusterLoop')) {
    if (manifest.metadata.namespace) await ensureNamespace(client, discovery, manifest.metadata.namespace);
    await applyManifest(client, discovery, manifest);
  }
  const applied: string[] = [];
  for (const { file, manifest } of loopManifests.filter(({ manifest }) => manifest.kind === 'ClusterLoop')) {
    const url = functionUrl(manifest.metadata.name);
    if (!url) {
      say(`skipping Loop ${manifest.metadata.name} (${file}): no registered function of that name`);
      continue;
    }
    let loop: Manifest = localLoop(manifest as LoopManifest, url);
    if (namespaced?.loops.has(manifest.metadata.name)) {
      // A tenant's Loop instead: in that namespace, as a ServiceAccount of it with the ClusterRole's rules as a Role.
      const account = (manifest.spec as { serviceAccount?: { name: string } } | undefined)?.serviceAccount?.name ?? '';
      const objects = namespacedSampleLoop(loop as LoopManifest, clusterRoleRules(account), namespaced.namespace);
      await ensureNamespace(client, discovery, namespaced.namespace);
      for (const object of objects.slice(0, -1)) await applyManifest(client, discovery, object);
      loop = objects.at(-1) ?? loop;
    }
    const key = signingKey(manifest.metadata.name);
    if (key) {
      const signed = signingManifests(loop as SignedLoop, key);
      for (const object of signed.objects) await applyManifest(client, discovery, object);
      loop = signed.loop;
    }
    await applyManifest(client, discovery, loop);
    applied.push(identityOf({ name: manifest.metadata.name, namespace: loop.metadata.namespace }));
  }
  return applied;
}
