// One `kubeloop dev` run's lifetime: the cluster it starts (or uses), the chart it installs there, what it
// started as it went (DevSession), and the stop that undoes exactly that.
import { ensureBinaries, startControlPlane, type ControlPlane } from '../cluster/index.ts';
import { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { packageRoot } from '../package-root.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from '../../webhooks/index.ts';
import { chartCrdFiles } from '../chart-crds.ts';
import { applyCrds, deleteIfPresent, readManifests } from './apply-manifests.ts';
import { stopLocalProcesses, type LocalProcess } from './local-processes.ts';
import { progressReporter } from './progress.ts';
import type { ProjectFunction } from './project-function.ts';
import type { LocalServiceAddress } from './service-address.ts';
import { installChartPlatform } from './chart-platform.ts';
import type { TenantUser } from './tenant-user.ts';
import type { DevTracing } from './dev-tracing.ts';
import type { OpenConsole } from '../console/open-console.ts';
import { scopedPath, type ScopedName } from '../scoped-names.ts';
import type { DevOptions, Say } from './dev-options.ts';

const REPO = packageRoot();

/** What `kubeloop dev` started so far, so that stopDev stops exactly that. */
export interface DevSession {
  started: LocalProcess[];
  appliedLoops: string[];
  appliedHooks: string[];
  plane?: ControlPlane;
  tracing?: DevTracing;
  client?: KubeClient;
  webhookRegistered: boolean;
  /** The router's history API port, once registered and Available (`kubeloop history` works). */
  historyApi?: number;
  projects: ProjectFunction[];
  /** Loopback addresses standing in for the seed hooks' Services (service-address.ts). */
  addresses: LocalServiceAddress[];
  /** The namespace admin's kubeconfig (--tenant). */
  tenant?: TenantUser;
  console?: OpenConsole;
}

/** A Loop's or hook's identity as dev records it ("team-a/web" or "web") back to the object. */
function scopedNamed(kind: ScopedName['kind'], identity: string): ScopedName {
  const [namespace, name] = identity.includes('/') ? identity.split('/') : [undefined, identity];
  return { kind, name: name ?? identity, ...(namespace ? { namespace } : {}) };
}

export async function stopDev(session: DevSession, say: Say): Promise<void> {
  const { client, plane } = session;
  say('stopping: router, webhook and functions, then the control plane ...');
  await stopLocalProcesses(session.started);
  await session.console?.close();
  for (const project of session.projects) await project.stop();
  for (const address of session.addresses) await address.close();
  if (client && !plane) {
    // On an existing cluster, leave nothing pointing at the ports that just closed.
    for (const name of session.appliedHooks) await deleteIfPresent(client, `/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/${name}`).catch(() => {});
    if (session.webhookRegistered) {
      for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
        await deleteIfPresent(client, `/apis/admissionregistration.k8s.io/v1/${kind}/${DEFAULT_HOOK_CONFIGURATION_NAME}`).catch(() => {});
      }
    }
    for (const loop of session.appliedLoops) await deleteIfPresent(client, scopedPath(scopedNamed('loop', loop))).catch(() => {});
    for (const hook of session.projects.flatMap((p) => p.hooks)) await deleteIfPresent(client, scopedPath(scopedNamed('hook', hook))).catch(() => {});
  }
  await client?.close();
  await session.tenant?.client.close();
  await plane?.stop();
  await session.tracing?.stop();
  say('stopped cleanly');
}

/** The given cluster's kubeconfig, or a local control plane started (and recorded in the session) for it. */
export async function startCluster(options: DevOptions, session: DevSession): Promise<string> {
  if (options.kubeconfig) return options.kubeconfig;
  const progress = progressReporter(options.out, 'control plane');
  let plane: ControlPlane;
  try {
    await ensureBinaries({ onProgress: (line) => progress.update(line) });
    const apiserverTracing = session.tracing?.apiserver;
    plane = session.plane = await startControlPlane({ onProgress: (line) => progress.update(line), ...(apiserverTracing ? { apiserverTracing } : {}) });
  } catch (error) {
    progress.done('control plane failed to start');
    throw error;
  }
  progress.done(`control plane ready: ${plane.server} (state in ${plane.dir})`);
  return plane.kubeconfigPath;
}

/**
 * The chart's CRDs and, on dev's own control plane, what a default `helm install` adds besides its workloads
 * (RBAC, admission policies, the history reader binding: chart-platform.ts). An existing cluster keeps its own.
 */
export async function installChart(options: DevOptions, session: DevSession, client: KubeClient, discovery: ResourceDiscovery, say: Say): Promise<void> {
  const crds = await applyCrds(client, discovery, (await Promise.all(chartCrdFiles(REPO).map((file) => readManifests(file)))).flat().map(({ manifest }) => manifest));
  say(`installed ${crds.length} CRDs: ${crds.join(', ')}`);
  if (!session.plane) return;
  const summary = await installChartPlatform(client, discovery, session.plane.binaries.helm, { namespace: options.namespace, seeds: options.seeds, webhook: options.webhook });
  say(`installed from the chart (helm template, as helm install would): ${summary}`);
}
