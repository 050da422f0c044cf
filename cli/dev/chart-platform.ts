// What a default `helm install` of the chart gives a cluster besides its workloads, for `kubeloop dev`: the
// aggregated tenant roles, the router's and the gateway's RBAC, the Loop and AdmissionHook admission policies
// and the history reader binding, rendered from charts/kubeloop by the helm binary the local control plane
// is built with (never copied), so dev and the chart cannot drift; and client kubeconfigs that let the local
// router and gateway act as the chart's ServiceAccounts, with exactly those rights.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { issueCertificate } from '../cluster/pki.ts';
import { writeKubeconfig } from '../cluster/kubeconfig-file.ts';
import { packageRoot } from '../package-root.ts';
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { applyManifest, ensureNamespace, type Manifest } from './apply-manifests.ts';

const run = promisify(execFile);

/** The release name dev renders as: init's Loops and hooks carry `app.kubernetes.io/instance: kubeloop`. */
export const DEV_RELEASE = 'kubeloop';

/**
 * The kinds dev takes from the chart. Its workloads (Deployments, Services, the seeds' ClusterLoops, hooks
 * and Secrets) run as local processes instead; NetworkPolicies, PodDisruptionBudgets and cert-manager
 * objects have nothing to act on; dev registers its own history APIService (dev-history-api.ts).
 */
const PLATFORM_KINDS = new Set([
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  // Created empty: the gateway fills them in and may not create webhook configurations itself.
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
]);

export interface ChartPlatformOptions {
  /** kubeloop's namespace (the release namespace). */
  namespace: string;
  /** The seed functions run: their Loops' ServiceAccounts and the router's rights on their kinds. */
  seeds: boolean;
  webhook: boolean;
}

/** The values dev renders with: the defaults, plus the history APIs (dev serves them) and what dev runs. */
export function chartSetValues(options: ChartPlatformOptions): string[] {
  return ['router.historyApi.enabled=true', 'webhook.admissionHistory.api.enabled=true', `seeds.enabled=${options.seeds}`, `webhook.enabled=${options.webhook}`].flatMap((value) => ['--set', value]);
}

/** The rendered chart's objects dev applies, in the order rendered (ServiceAccounts before their bindings). */
export function platformManifests(rendered: Manifest[]): Manifest[] {
  return rendered.filter((m) => PLATFORM_KINDS.has(m.kind));
}

/** `helm template` of the packaged chart, as `helm install kubeloop charts/kubeloop -n <namespace>` would render it. */
export async function renderChartPlatform(helm: string, options: ChartPlatformOptions): Promise<Manifest[]> {
  const chart = join(packageRoot(), 'charts', 'kubeloop');
  let stdout: string;
  try {
    ({ stdout } = await run(helm, ['template', DEV_RELEASE, chart, '--namespace', options.namespace, ...chartSetValues(options)], { maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new Error(`helm template ${chart} failed: ${stderr.trim()}`, { cause: error });
  }
  const manifests = parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null && typeof m === 'object' && typeof m.kind === 'string');
  return platformManifests(manifests);
}

/** The ServiceAccount user name the API server gives a chart component (RBAC subjects of kind ServiceAccount match it). */
export function serviceAccountUser(namespace: string, component: 'router' | 'webhook'): string {
  return `system:serviceaccount:${namespace}:${DEV_RELEASE}-${component}`;
}

/** The groups the API server gives a ServiceAccount's token, which a client certificate carries as organizations. */
function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/**
 * A kubeconfig for `user` with a client certificate from the local control plane's CA (its pki folder):
 * the local router and gateway authenticate as the chart's ServiceAccounts, a tenant as its own user.
 */
export async function clientKubeconfig(plane: { dir: string; server: string }, user: string, file: string, groups: string[] = [], namespace?: string): Promise<string> {
  const pki = join(plane.dir, 'pki');
  const ca = { certPem: await readFile(join(pki, 'ca.crt'), 'utf8'), keyPem: await readFile(join(pki, 'ca.key'), 'utf8') };
  await writeKubeconfig(file, plane.server, ca.certPem, user, await issueCertificate(ca, { commonName: user, usage: 'client', ...(groups.length > 0 ? { organizations: groups } : {}) }), namespace);
  return file;
}

/** Renders and applies the platform objects; returns a one-line summary ("12 ClusterRoles, 2 ValidatingAdmissionPolicies, ..."). */
export async function installChartPlatform(client: KubeClient, discovery: ResourceDiscovery, helm: string, options: ChartPlatformOptions): Promise<string> {
  const manifests = await renderChartPlatform(helm, options);
  for (const manifest of manifests) {
    if (manifest.metadata.namespace) await ensureNamespace(client, discovery, manifest.metadata.namespace);
    await applyManifest(client, discovery, manifest, options.namespace);
  }
  const counts = new Map<string, number>();
  for (const { kind } of manifests) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${n} ${kind}${n > 1 ? 's' : ''}`).join(', ');
}

/** Kubeconfigs in dir for the router and the gateway as the chart's ServiceAccounts of the release namespace. */
export async function chartAccountKubeconfigs(plane: { dir: string; server: string }, dir: string, namespace: string): Promise<{ router: string; webhook: string }> {
  return {
    router: await clientKubeconfig(plane, serviceAccountUser(namespace, 'router'), join(dir, 'router.kubeconfig'), serviceAccountGroups(namespace)),
    webhook: await clientKubeconfig(plane, serviceAccountUser(namespace, 'webhook'), join(dir, 'webhook.kubeconfig'), serviceAccountGroups(namespace)),
  };
}
