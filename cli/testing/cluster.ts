// kubeloop/testing/cluster: a function project's cluster tests, as envtest is for kubebuilder. Starts the local
// control plane (or uses a given cluster), installs the CRDs and what the chart's `helm install` adds (RBAC,
// admission policies), runs the project's function and applies its loop.yaml / admission-hook.yaml as
// `kubeloop dev` does, with the router and the gateway as local processes; the test then asserts on objects.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ensureBinaries, startControlPlane, type ControlPlane } from '../cluster/index.ts';
import { KubeClient, loadKubeConfig, objectPath, ResourceDiscovery } from '../../lib/kube/index.ts';
import { chartCrdFiles } from '../chart-crds.ts';
import { packageRoot } from '../package-root.ts';
import { applyCrds, applyManifest, readManifests, type Manifest } from '../dev/apply-manifests.ts';
import { chartAccountKubeconfigs, installChartPlatform } from '../dev/chart-platform.ts';
import { stopLocalProcesses, type LocalProcess } from '../dev/local-processes.ts';
import { startLocalGateway, startLocalRouter } from '../dev/platform-processes.ts';
import { startProjectFunction, type ProjectFunction } from '../dev/project-function.ts';
import { createTenantUser, type TenantUser } from '../dev/tenant-user.ts';
import { waitUntil, type Condition, type ObjectRef } from './wait-until.ts';

export { type Condition, type ObjectRef } from './wait-until.ts';
export type { KubeClient } from '../../lib/kube/index.ts';

export interface TestClusterOptions {
  /**
   * Use this cluster instead of starting a control plane (default: $KUBELOOP_TEST_KUBECONFIG): one left running by
   * `kubeloop cluster up --detach` saves the start-up in every test run, and is treated as one the harness
   * started (chart RBAC and policies, asNamespaceAdmin). Any other cluster gets the CRDs only and is used as the admin.
   */
  kubeconfig?: string;
  /** kubeloop's namespace (the chart's release namespace). Default kubeloop-system. */
  namespace?: string;
  /** Progress lines (control plane start-up, what was applied); default silent. */
  onProgress?: (line: string) => void;
}

export interface RunFunctionOptions {
  /** A TypeScript/JavaScript module (`./src/index.ts`), or a command run in `cwd` (`python3 function.py`, `go run .`). */
  function: string | { command: string; cwd?: string };
  /** init's loop.yaml (its crd.yaml beside it is installed first). */
  loop?: string;
  /** init's admission-hook.yaml (starts the webhook gateway). */
  hook?: string;
  /** Namespace of the Loop, the hook and the objects without one; created when missing. */
  namespace: string;
  /** Apply the files as a user bound only to `admin` in the namespace, as a team would (a harness-started plane only). */
  asNamespaceAdmin?: boolean;
}

export interface RunningFunction {
  /** "team-a/my-controller": the Loops and hooks applied. */
  loops: string[];
  hooks: string[];
  /** The function's log file (its stdout and stderr). */
  logPath(): string;
}

export interface TestCluster {
  /** The admin kubeconfig file (export KUBECONFIG=it to look with kubectl while a test pauses). */
  kubeconfig: string;
  /** An admin client (`client.request({ path })`), closed by stop(). */
  client: KubeClient;
  /** Runs the function locally and applies its files; the router (and with a hook the gateway) reach it by its Service. */
  runFunction(options: RunFunctionOptions): Promise<RunningFunction>;
  /** Server-side applies an object as the admin (namespace: default when it has none). */
  apply<T extends Manifest>(object: T, namespace?: string): Promise<T>;
  /** The object, or undefined when it does not exist. */
  get<T = Manifest>(ref: ObjectRef): Promise<T | undefined>;
  /** Polls `check` until it returns a value (not undefined or false); throws naming `what` after timeoutMs (default 60 s). */
  waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Waits until the object's condition `type` has `status` (default "True"); returns the condition. */
  waitForCondition(ref: ObjectRef, type: string, status?: string, timeoutMs?: number): Promise<Condition>;
  /** Stops the function(s), the router, the gateway and a control plane it started, and removes its files. */
  stop(): Promise<void>;
}

/** Starts (or connects to) the cluster and installs the chart's CRDs and platform objects. */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const say = options.onProgress ?? (() => {});
  const namespace = options.namespace ?? 'kubeloop-system';
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-test-cluster-'));
  const logDir = join(dir, 'logs');
  await mkdir(logDir);
  const given = options.kubeconfig ?? process.env.KUBELOOP_TEST_KUBECONFIG;
  let plane: ControlPlane | undefined;
  const reused = given ? await localPlaneOf(given) : undefined;
  const platform: LocalProcess[] = [];
  const projects: ProjectFunction[] = [];
  const tenants = new Map<string, TenantUser>();
  let client: KubeClient | undefined;
  const stop = async () => {
    await stopLocalProcesses(platform);
    for (const project of projects) await project.stop();
    for (const tenant of tenants.values()) await tenant.client.close();
    await client?.close();
    await plane?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (!given) {
      await ensureBinaries({ onProgress: say });
      plane = await startControlPlane({ onProgress: say });
    }
    const kubeconfig = given ?? plane!.kubeconfigPath;
    client = await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig }));
    const admin = client;
    const discovery = new ResourceDiscovery(admin);
    const crds = (await Promise.all(chartCrdFiles(packageRoot()).map((file) => readManifests(file)))).flat().map(({ manifest }) => manifest);
    say(`installed CRDs: ${(await applyCrds(admin, discovery, crds)).join(', ')}`);
    // A local plane (started here or reused): the router and gateway act as the chart's ServiceAccounts, with its RBAC.
    const local = plane ?? reused;
    if (local) {
      const helm = plane?.binaries.helm ?? (await ensureBinaries({ onProgress: say })).helm;
      say(`installed from the chart: ${await installChartPlatform(admin, discovery, helm, { namespace, seeds: false, webhook: true })}`);
    }
    const accounts = local ? await chartAccountKubeconfigs(local, dir, namespace) : { router: kubeconfig, webhook: kubeconfig };

    // The router and gateway learn the Services' local addresses at start: each new function restarts them.
    const restartPlatform = async (hooks: boolean) => {
      await stopLocalProcesses(platform.splice(0));
      const wiring = (account: string) => ({ kubeconfig: account, connectEntries: projects.flatMap((p) => p.connectEntries), logDir, ...(local ? { plane: local } : {}) });
      platform.push(await startLocalRouter(wiring(accounts.router)));
      if (hooks) platform.push(await startLocalGateway(wiring(accounts.webhook), namespace));
    };

    const cluster: TestCluster = {
      kubeconfig,
      client: admin,
      async runFunction(run) {
        if (run.asNamespaceAdmin && !local) throw new Error(`runFunction: asNamespaceAdmin needs a local control plane (its CA signs the user's certificate); ${kubeconfig} is not one`);
        let as = admin;
        if (run.asNamespaceAdmin && local) {
          const tenant = tenants.get(run.namespace) ?? (await createTenantUser(admin, discovery, local, dir, run.namespace));
          tenants.set(run.namespace, tenant);
          as = tenant.client;
        }
        const source = typeof run.function === 'string' ? { module: resolve(run.function) } : { command: run.function.command, cwd: resolve(run.function.cwd ?? '.') };
        const spec = { source, namespace: run.namespace, ...(run.loop ? { loop: resolve(run.loop) } : {}), ...(run.hook ? { hook: resolve(run.hook) } : {}) };
        const project = await startProjectFunction(admin, as, spec, logDir, say, { chartAccount: local !== undefined });
        projects.push(project);
        // A function that did not start fails the test here, with its log, rather than as a timeout later.
        const problem = project.fn.problem();
        if (problem) throw new Error(`the function ${functionName(run.function)}: ${problem}; log ${project.fn.logPath()}`);
        await restartPlatform(projects.some((p) => p.hooks.length > 0));
        return { loops: project.loops, hooks: project.hooks, logPath: () => project.fn.logPath() };
      },
      apply: (object, ns) => applyManifest(admin, discovery, object, ns) as Promise<typeof object>,
      async get(ref) {
        const resource = await discovery.resolve(ref.apiVersion, ref.kind);
        return admin.getIfExists({ path: objectPath(resource, ref.name, resource.namespaced ? (ref.namespace ?? 'default') : undefined) });
      },
      waitFor: (what, check, timeoutMs) => waitUntil(what, check, timeoutMs),
      async waitForCondition(ref, type, status = 'True', timeoutMs) {
        const where = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
        return waitUntil(
          `${where} condition ${type}=${status}`,
          async () => (await cluster.get<{ status?: { conditions?: Condition[] } }>(ref))?.status?.conditions?.find((c) => c.type === type && c.status === status),
          timeoutMs,
        );
      },
      stop,
    };
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * A kubeconfig of a local kubeloop control plane (`kubeloop cluster up`, another test run's) sits in the plane's
 * folder beside its pki/: that CA issues the router's, gateway's and namespace admin's certificates.
 */
async function localPlaneOf(kubeconfig: string): Promise<{ dir: string; server: string; ports: number[] } | undefined> {
  const dir = dirname(resolve(kubeconfig));
  if (!existsSync(join(dir, 'pki', 'ca.key'))) return undefined;
  const server = (await loadKubeConfig({ kubeconfig })).getCurrentCluster()?.server;
  // Its etcd's and components' ports are not known here: the API server's is refused as a function target.
  return server ? { dir, server, ports: [Number(new URL(server).port)] } : undefined;
}

const functionName = (fn: RunFunctionOptions['function']): string => (typeof fn === 'string' ? fn : `\`${fn.command}\``);
