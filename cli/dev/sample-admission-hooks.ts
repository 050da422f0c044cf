// The sample AdmissionHooks (samples/admission-hooks: the Watcher sidecar injector) pointed at admission
// functions running on this machine, for `kubeloop dev` and the soak, with the RBAC that lets each hook's
// ServiceAccount get its context objects, and the wait for the gateway to register them.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { packageRoot } from '../package-root.ts';
import { applyManifest, readManifests, type Manifest } from './apply-manifests.ts';

const REPO = packageRoot();

/** The names of the sample hooks; each calls the admission function of the same name. */
export async function sampleAdmissionHookNames(): Promise<string[]> {
  return (await readManifests(join(REPO, 'samples', 'admission-hooks'))).map(({ manifest }) => manifest.metadata.name);
}

interface HookManifest extends Manifest {
  spec: NonNullable<AdmissionHook['spec']>;
}

/**
 * Lets the hook's ServiceAccount get its context kinds in every namespace (a ClusterRole and binding named
 * kubeloop-dev-hook-<hook>), as the chart does for the hooks it renders: the gateway sends nothing otherwise.
 */
export async function grantHookContext(client: KubeClient, discovery: ResourceDiscovery, hook: AdmissionHook): Promise<void> {
  const serviceAccount = hook.spec?.serviceAccount;
  const context = hook.spec?.context ?? [];
  if (!serviceAccount || context.length === 0) return;
  const name = `kubeloop-dev-hook-${hook.metadata?.name ?? ''}`;
  const resources = await Promise.all(context.map((entry) => discovery.resolve(entry.apiVersion, entry.kind)));
  const rules = resources.map((r) => ({ apiGroups: [r.group], resources: [r.plural], verbs: ['get'] }));
  const rbac = 'rbac.authorization.k8s.io/v1';
  await applyManifest(client, discovery, { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules } as Manifest);
  await applyManifest(client, discovery, {
    apiVersion: rbac,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', ...serviceAccount }],
  } as Manifest);
}

/**
 * The AdmissionHooks of samples/admission-hooks pointed at local admission functions (by hook name; a hook
 * without one is skipped), keeping the function's path. Returns the names applied. Also used by the soak.
 */
export async function applySampleAdmissionHooks(
  client: KubeClient,
  discovery: ResourceDiscovery,
  functionUrl: (hook: string) => string | undefined,
  say: (line: string) => void,
  /** Call the function by this Service (which dev leads to it) instead of its URL: the chart's hook policy refuses loopback URLs. */
  serviceOf?: (hook: string) => { name: string; namespace: string; port: number } | undefined,
): Promise<string[]> {
  const applied: string[] = [];
  for (const { file, manifest } of await readManifests(join(REPO, 'samples', 'admission-hooks'))) {
    const url = functionUrl(manifest.metadata.name);
    if (!url) {
      say(`skipping AdmissionHook ${manifest.metadata.name} (${file}): no registered admission function of that name`);
      continue;
    }
    const hook = manifest as HookManifest;
    const path = hook.spec.function.url ? new URL(hook.spec.function.url).pathname : (hook.spec.function.service?.path ?? '/admit');
    await grantHookContext(client, discovery, hook);
    const service = serviceOf?.(manifest.metadata.name);
    await applyManifest(client, discovery, { ...hook, spec: { ...hook.spec, function: service ? { service: { ...service, path } } : { url: `${url}${path}` } } });
    applied.push(manifest.metadata.name);
  }
  return applied;
}

/** Waits for the hooks' Ready condition (the gateway registered them), or says why one is not Ready. */
export async function waitForHooksReady(client: KubeClient, names: string[], say: (line: string) => void, signal: AbortSignal, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    let ready: { status?: string; message?: string } | undefined;
    while (!signal.aborted) {
      const hook = await client.request<{ status?: { conditions?: Array<{ type: string; status?: string; message?: string }> } }>({ path: `/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/${name}` });
      ready = hook.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'True' || Date.now() > deadline) break;
      await sleep(200, undefined, { signal }).catch(() => {});
    }
    if (ready?.status !== 'True' && !signal.aborted) say(`AdmissionHook ${name} is not Ready: ${ready?.message ?? 'no Ready condition yet (see the webhook log)'}`);
  }
}
