// The platform under soak, started through public entry points only: a private control plane
// (cli/cluster), the CRDs, Loops and AdmissionHooks as `kubeloop dev` applies them, the four functions and
// the Watcher sidecar admission function, two routers with leader election and two webhook gateway replicas
// as `node cli/bin.js ...` processes (cli/dev/local-processes).
// Fault proxies sit in front of the functions, the API server (for the routers and webhooks) and the webhooks.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { applyManifest, readManifests, waitForCrdsEstablished } from '../../cli/dev/apply-manifests.ts';
import { cliEntry, startLocalProcess, type LocalProcess } from '../../cli/dev/local-processes.ts';
import { applySampleLoops } from '../../cli/dev/sample-loops.ts';
import { applySampleAdmissionHooks, waitForHooksReady } from '../../cli/dev/sample-admission-hooks.ts';
import { functionRegistry } from '../../functions/registry.ts';
import { isApiError, KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { startFunctionProxy, type FunctionProxy } from './function-proxy.ts';
import { ReconcileTracker } from './reconcile-tracker.ts';
import { freePort } from '../../cli/cluster/free-port.ts';
import type { SampledProcess } from './memory-sampler.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

export const SOAK_NAMESPACE = 'soak';
export const KUBELOOP_NAMESPACE = 'kubeloop';
export const ROUTERS = ['router-a', 'router-b'] as const;
export const WEBHOOKS = ['webhook-a', 'webhook-b'] as const;
const LEASE_NAME = 'kubeloop-router';
/** Short, so a killed leader is replaced within seconds (the CLI derives the renew deadline from it). */
const LEASE_SECONDS = 6;

export interface Platform {
  plane: ControlPlane;
  /** Admin client straight to the API server (the churn and the independent watches). */
  client: KubeClient;
  apiProxy: TcpProxy;
  functions: ReadonlyMap<string, FunctionProxy>;
  tracker: ReconcileTracker;
  /** Running kubeloop processes by role, with their inspector port, for memory sampling. */
  processes(): SampledProcess[];
  /** Role of the router holding the lease, if any. */
  leader(): Promise<string | undefined>;
  kill(role: string): Promise<void>;
  restart(role: string): Promise<void>;
  rotateCertificate(): Promise<string>;
  stop(): Promise<void>;
}

export async function proxiedKubeconfig(adminPath: string, port: number, file: string): Promise<string> {
  const config = parse(await readFile(adminPath, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> };
  // The API server's certificate names 127.0.0.1, so TLS verifies through the pass-through proxy.
  for (const entry of config.clusters) entry.cluster.server = `https://127.0.0.1:${port}`;
  await writeFile(file, stringify(config), { mode: 0o600 });
  return file;
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  try {
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  } catch (error) {
    if (!isApiError(error, 409)) throw error;
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.request({ path: `/api/v1/namespaces/${name}/serviceaccounts/default` });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no default ServiceAccount in ${name}: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export async function startPlatform(logDir: string, say: (line: string) => void, namespacedLoops: string[] = []): Promise<Platform> {
  const live = new Map<string, LocalProcess>();
  const generations = new Map<string, number>();
  const inspectPorts = new Map<string, number>();
  const proxies: Array<{ close(): Promise<void> }> = [];
  let plane: ControlPlane | undefined;
  let client: KubeClient | undefined;

  const stop = async (): Promise<void> => {
    // A paused etcd would ignore SIGTERM until its grace ran out.
    const etcd = plane?.pids().etcd;
    if (etcd) process.kill(etcd, 'SIGCONT');
    const order = [...ROUTERS, ...WEBHOOKS, ...[...live.keys()].filter((r) => r.startsWith('function-'))];
    await Promise.all(order.map((role) => live.get(role)?.process.stop(10_000)));
    for (const proxy of proxies) await proxy.close().catch(() => {});
    await client?.close();
    await plane?.stop();
  };

  try {
    plane = await startControlPlane({ nodes: 2, onProgress: (line) => say(`control plane: ${line}`) });
    client = await KubeClient.fromKubeConfig(plane.kubeConfig());
    const admin = client;
    const discovery = new ResourceDiscovery(admin);
    const crds = (await Promise.all(chartCrdFiles(REPO).map((file) => readManifests(file)))).flat();
    for (const { manifest } of crds) await applyManifest(admin, discovery, manifest);
    await waitForCrdsEstablished(admin, crds.map(({ manifest }) => manifest.metadata.name));
    await ensureNamespace(admin, SOAK_NAMESPACE);
    await ensureNamespace(admin, KUBELOOP_NAMESPACE);

    const apiPort = Number(new URL(plane.server).port);
    const apiProxy = await startTcpProxy(() => [{ host: '127.0.0.1', port: apiPort }]);
    proxies.push(apiProxy);
    const kubeconfig = await proxiedKubeconfig(plane.kubeconfigPath, apiProxy.port, join(logDir, 'proxied.kubeconfig'));

    const commands = new Map<string, (generation: number) => Omit<Parameters<typeof startLocalProcess>[0], 'name' | 'logDir'>>();
    const start = async (role: string): Promise<LocalProcess> => {
      const options = commands.get(role);
      if (!options) throw new Error(`unknown process role ${role}`);
      const generation = (generations.get(role) ?? 0) + 1;
      generations.set(role, generation);
      // An inspector on loopback lets the soak force a GC and read the retained heap (heap-probe.ts).
      const inspectPort = await freePort();
      const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:${inspectPort}`.trim();
      const proc = await startLocalProcess({ name: role, logDir, ...options(generation), env: { NODE_OPTIONS: nodeOptions } });
      live.set(role, proc);
      inspectPorts.set(role, inspectPort);
      return proc;
    };

    const tracker = new ReconcileTracker();
    const functions = new Map<string, FunctionProxy>();
    for (const name of Object.keys(functionRegistry).sort()) {
      const role = `function-${name}`;
      commands.set(role, () => ({ args: ['function', name, '--host=127.0.0.1', '--log-level=warn'] }));
      const fn = await start(role);
      const proxy = await startFunctionProxy(name, fn.url, tracker, () => Date.now());
      proxies.push(proxy);
      functions.set(name, proxy);
    }
    // --namespaced-loops: those run as a team's Loops in the soak namespace, beside the other ClusterLoops.
    const loops = await applySampleLoops(admin, discovery, (name) => functions.get(name)?.url, say, undefined, { namespace: SOAK_NAMESPACE, loops: new Set(namespacedLoops) });
    say(`Loops: ${loops.join(', ')}`);
    // The Watcher sidecar injector: an admission function behind the gateway (not a fault target).
    commands.set('function-watcher-sidecar', () => ({ args: ['function', 'watcher-sidecar', '--host=127.0.0.1', '--log-level=warn'] }));
    const injector = await start('function-watcher-sidecar');

    for (const role of ROUTERS) {
      // info: the logs then say when each replica became leader, which a podset-bound report needs read beside.
      commands.set(role, (generation) => ({
        args: ['router', `--kubeconfig=${kubeconfig}`, '--host=127.0.0.1', '--allow-loopback-functions', '--leader-elect', `--lease-namespace=${KUBELOOP_NAMESPACE}`, `--lease-name=${LEASE_NAME}`, `--lease-duration-seconds=${LEASE_SECONDS}`, `--identity=${role}-${generation}`, '--log-level=info'],
      }));
      await start(role);
    }

    // Two replicas behind one address, as behind a Service: the configuration points at the balancer.
    const webhookProxy = await startTcpProxy(() =>
      WEBHOOKS.flatMap((role) => {
        const proc = live.get(role);
        return proc?.process.running ? [{ host: '127.0.0.1', port: Number(new URL(proc.url).port) }] : [];
      }),
    );
    proxies.push(webhookProxy);
    // The gateways register the hook at the balancer's address and send only the soak namespace.
    const hooks = await applySampleAdmissionHooks(admin, discovery, (name) => (name === 'watcher-sidecar' ? injector.url : undefined), say);
    for (const role of WEBHOOKS) {
      commands.set(role, () => ({
        args: [
          'webhook',
          `--kubeconfig=${kubeconfig}`,
          '--host=127.0.0.1',
          `--namespace=${KUBELOOP_NAMESPACE}`,
          `--advertise-url=https://127.0.0.1:${webhookProxy.port}`,
          `--only-namespace=${SOAK_NAMESPACE}`,
          // The injector listens on loopback, as the routers' functions do (the hook URL rules refuse it otherwise).
          '--allow-loopback-functions',
          '--cert-check-interval-seconds=60',
          '--log-level=warn',
        ],
        scheme: 'https' as const,
        opsPort: true,
      }));
      await start(role);
    }
    // Registered once a gateway has the Watcher cache: the churn's first Watcher pods must see the hook.
    await waitForHooksReady(admin, hooks, say, new AbortController().signal, 60_000);

    return {
      plane,
      client: admin,
      apiProxy,
      functions,
      tracker,
      processes: () => [...live].flatMap(([role, p]) => (p.process.running && p.process.pid ? [{ role, pid: p.process.pid, inspectPort: inspectPorts.get(role) }] : [])),
      async leader() {
        const lease = await admin.request<{ spec?: { holderIdentity?: string } }>({
          path: `/apis/coordination.k8s.io/v1/namespaces/${KUBELOOP_NAMESPACE}/leases/${LEASE_NAME}`,
        });
        const holder = lease.spec?.holderIdentity ?? '';
        return ROUTERS.find((role) => holder.startsWith(`${role}-`) && live.get(role)?.process.running);
      },
      async kill(role) {
        const proc = live.get(role);
        if (!proc) throw new Error(`no process ${role}`);
        proc.process.killNow();
        await proc.process.stop(1000);
      },
      async restart(role) {
        const proc = await start(role);
        if (role.startsWith('function-')) functions.get(role.slice('function-'.length))?.setUpstream(proc.url);
      },
      async rotateCertificate() {
        try {
          const { stdout } = await run(
            process.execPath,
            [cliEntry(), 'certs', 'rotate', '--force', '--retry-seconds=40', `--kubeconfig=${plane!.kubeconfigPath}`, `--namespace=${KUBELOOP_NAMESPACE}`],
            { timeout: 60_000 },
          );
          return stdout.trim();
        } catch (error) {
          // The fault line shows one line: the command's own last words, not "Command failed: <argv>".
          const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n').at(-1);
          throw new Error(`certs rotate failed: ${stderr || (error instanceof Error ? error.message : String(error))}`);
        }
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
