// Starts a real local control plane as child processes: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok with fake nodes, on free loopback ports, and stops it without leftovers.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries, type ClusterBinaries } from './binaries.ts';
import {
  addNodesAndWaitUntilReady,
  startApiserver,
  startComponents,
  startEtcd,
  writePlaneFiles,
  type Launch,
  type PlaneFiles,
} from './control-plane-components.ts';
import { startOrphanReaper } from './orphan-reaper.ts';
import { apiserverTracingArgs, type ApiserverTracing } from './apiserver-tracing.ts';
import { registerTempDir, unregisterTempDir } from './supervisor.ts';
import { kubernetesVersion } from './versions.ts';
import { ensureNodeBinaries, type NodeBinaries } from './node-binaries.ts';
import { blockersMessage, realNodeBlockers } from './real-node/preflight.ts';
import { startRealNode, type RealNode } from './real-node/real-node.ts';

/** The machine cannot run a real node (no root, no cgroups, a missing tool); the message says what to do. */
export class RealNodeUnavailableError extends Error {}

export interface ControlPlane {
  kubeconfigPath: string;
  server: string;
  dir: string;
  binaries: ClusterBinaries;
  /** The loopback ports its components listen on (etcd, API server, ...): no function may be called there. */
  ports: number[];
  /** Admin (system:masters) client configuration. */
  kubeConfig(): KubeConfig;
  /** Stops and starts kube-apiserver on the same port, for tests of clients riding out an outage. */
  restartApiServer(): Promise<void>;
  /** PIDs of the running processes, by component name (the real node's too). */
  pids(): Record<string, number>;
  /** The real node, when asked for. */
  realNode?: RealNode;
  stop(): Promise<void>;
}

export interface StartControlPlaneOptions {
  /** Working directory (PKI, etcd data, logs, kubeconfig). Default: a temp dir removed on stop. */
  dir?: string;
  /** Number of fake kwok nodes. Default 2. */
  nodes?: number;
  onProgress?: (line: string) => void;
  /** Export kube-apiserver's own spans (APIServerTracing) to this OTLP/gRPC collector. */
  apiserverTracing?: ApiserverTracing;
  /** Run this Kubernetes version (e.g. KUBERNETES_RELEASES.oldest), built into its own cache dir on first use. */
  kubernetesVersion?: string;
  /**
   * Join one real node (containerd, kubelet, kube-proxy, CoreDNS in their own network namespace) beside the kwok
   * nodes, which are then tainted. Needs root, cgroups, runc and the CNI plugins (RealNodeUnavailableError).
   */
  realNode?: boolean;
}

export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const onProgress = opts.onProgress ?? (() => {});
  if (opts.realNode) {
    const blockers = await realNodeBlockers();
    if (blockers.length > 0) throw new RealNodeUnavailableError(blockersMessage(blockers));
  }
  const binaries = await ensureBinaries({ onProgress, ...(opts.kubernetesVersion ? { kubernetesVersion: opts.kubernetesVersion } : {}) });
  const nodeBinaries = opts.realNode ? await ensureNodeBinaries({ onProgress, ...(opts.kubernetesVersion ? { kubernetesVersion: opts.kubernetesVersion } : {}) }) : undefined;
  // Another process may bind a port between our probe and the component's bind: retry on fresh ports.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(opts, binaries, onProgress, nodeBinaries);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3 || !/address already in use/i.test(message)) throw error;
      onProgress(`a port was taken while starting (attempt ${attempt}); retrying on other ports`);
    }
  }
}

/** Stops in reverse start order: the API server's clients first (together), so nothing logs errors about a
 * vanished API server, then the API server, then etcd; then the reaper and an owned directory. */
async function stopPlane(launch: Launch, ownsDir: boolean, stopReaper: () => void, realNode: () => RealNode | undefined): Promise<void> {
  // The node first: its kubelet and kube-proxy are clients of the API server, and its teardown needs none.
  await realNode()?.stop();
  const stopTimed = async (name: string): Promise<void> => {
    const proc = launch.processes.get(name);
    if (!proc?.running) return;
    const t0 = Date.now();
    await proc.stop();
    launch.onProgress(`stopped ${name} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  };
  await Promise.all(['kwok', 'kube-scheduler', 'kube-controller-manager'].map(stopTimed));
  await stopTimed('kube-apiserver');
  await stopTimed('etcd');
  stopReaper();
  if (ownsDir) {
    await rm(launch.dir, { recursive: true, force: true, maxRetries: 3 });
    unregisterTempDir(launch.dir);
  }
}

function planeHandle(launch: Launch, files: PlaneFiles, stop: () => Promise<void>, realNode: RealNode | undefined): ControlPlane {
  const { kubeconfigPath, server } = files;
  return {
    kubeconfigPath,
    server,
    dir: launch.dir,
    binaries: launch.binaries,
    ports: Object.values(files.ports),
    kubeConfig(): KubeConfig {
      const config = new KubeConfig();
      config.loadFromFile(kubeconfigPath);
      return config;
    },
    async restartApiServer(): Promise<void> {
      await launch.processes.get('kube-apiserver')?.stop();
      await startApiserver(launch, files);
    },
    pids(): Record<string, number> {
      const out: Record<string, number> = {};
      for (const [name, proc] of launch.processes) if (proc.running && proc.pid) out[name] = proc.pid;
      return { ...out, ...realNode?.pids() };
    },
    ...(realNode ? { realNode } : {}),
    stop,
  };
}

async function startOnce(opts: StartControlPlaneOptions, binaries: ClusterBinaries, onProgress: (line: string) => void, nodeBinaries: NodeBinaries | undefined): Promise<ControlPlane> {
  const started = Date.now();
  const ownsDir = !opts.dir;
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'kubeloop-cp-')));
  if (ownsDir) registerTempDir(dir);
  const stopReaper = startOrphanReaper(dir, ownsDir);
  const launch: Launch = { binaries, dir, logDir: join(dir, 'logs'), processes: new Map(), onProgress, kubernetesVersion: opts.kubernetesVersion ?? kubernetesVersion() };
  if (opts.apiserverTracing) launch.apiserverExtraArgs = await apiserverTracingArgs(dir, opts.apiserverTracing);
  const pkiDir = join(dir, 'pki');
  await Promise.all([mkdir(launch.logDir, { recursive: true }), mkdir(pkiDir, { recursive: true })]);
  // A reused --dir starts from a fresh etcd: its old PKI would not match the new one.
  await rm(join(dir, 'etcd'), { recursive: true, force: true });
  let realNode: RealNode | undefined;
  const stopAll = (): Promise<void> => stopPlane(launch, ownsDir, stopReaper, () => realNode);

  try {
    const files = await writePlaneFiles(dir, pkiDir, nodeBinaries !== undefined);
    await startEtcd(launch, files);
    await startApiserver(launch, files);
    const components = startComponents(launch, files);
    await addNodesAndWaitUntilReady(launch, files, components, opts.nodes ?? 2, started);
    if (nodeBinaries) {
      realNode = await startRealNode({
        dir: join(dir, 'node'),
        logDir: launch.logDir,
        apiserverPort: files.ports.apiserver,
        ca: files.pki.ca,
        caCertFile: files.pki.caCert,
        adminKubeconfig: files.kubeconfigPath,
        binaries: nodeBinaries,
        onProgress,
      });
    }
    onProgress(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${files.server}, kubeconfig ${files.kubeconfigPath}`);
    return planeHandle(launch, files, stopAll, realNode);
  } catch (error) {
    await stopAll();
    throw error;
  }
}
