// Starts a real local control plane as child processes: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok with fake nodes, on free loopback ports, and stops it without leftovers.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries, type ClusterBinaries } from './binaries.ts';
import { freePort } from './free-port.ts';
import { writeKubeconfig } from './kubeconfig-file.ts';
import { kwokStagesYaml } from './kwok-stages.ts';
import { startOrphanReaper } from './orphan-reaper.ts';
import { createControlPlanePki, type ControlPlanePki } from './pki.ts';
import { registerTempDir, spawnSupervised, unregisterTempDir, type SupervisedProcess } from './supervisor.ts';

export interface ControlPlane {
  kubeconfigPath: string;
  server: string;
  dir: string;
  binaries: ClusterBinaries;
  /** Admin (system:masters) client configuration. */
  kubeConfig(): KubeConfig;
  /** Stops and starts kube-apiserver on the same port, for tests of clients riding out an outage. */
  restartApiServer(): Promise<void>;
  /** PIDs of the running processes, by component name. */
  pids(): Record<string, number>;
  stop(): Promise<void>;
}

export interface StartControlPlaneOptions {
  /** Working directory (PKI, etcd data, logs, kubeconfig). Default: a temp dir removed on stop. */
  dir?: string;
  /** Number of fake kwok nodes. Default 2. */
  nodes?: number;
  onProgress?: (line: string) => void;
}

const START_TIMEOUT_MS = 60_000;

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
}

/** GET over HTTP(S); resolves with the status code and body. */
function get(url: string, tls?: { ca?: string; cert?: string; key?: string; insecure?: boolean }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const options = { timeout: 2000, ca: tls?.ca, cert: tls?.cert, key: tls?.key, rejectUnauthorized: !tls?.insecure };
    const req = (url.startsWith('https:') ? request : httpRequest)(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout GET ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

function apiserverArgs(pki: ControlPlanePki, ports: Ports, dir: string): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${ports.apiserver}`,
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=RBAC',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    // The default admission plugins stay on: ServiceAccount, NamespaceLifecycle, Mutating/ValidatingAdmissionWebhook...
    '--profiling=false',
    '--v=1',
  ];
}

export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const onProgress = opts.onProgress ?? (() => {});
  const binaries = await ensureBinaries({ onProgress });
  // Another process may bind a port between our probe and the component's bind: retry on fresh ports.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(opts, binaries, onProgress);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3 || !/address already in use/i.test(message)) throw error;
      onProgress(`a port was taken while starting (attempt ${attempt}); retrying on other ports`);
    }
  }
}

/**
 * What kube-controller-manager and kube-scheduler both take: the kubeconfig for API access and for
 * delegated authn/authz of their own secure port (loopback only, probes and metrics open), no leader
 * election (one instance per control plane).
 */
function componentArgs(kubeconfig: string, port: number, certDir: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
    '--leader-elect=false',
  ];
}

async function startOnce(opts: StartControlPlaneOptions, binaries: ClusterBinaries, onProgress: (line: string) => void): Promise<ControlPlane> {
  const started = Date.now();
  const ownsDir = !opts.dir;
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'kubeloop-cp-')));
  if (ownsDir) registerTempDir(dir);
  const stopReaper = startOrphanReaper(dir, ownsDir);
  const logDir = join(dir, 'logs');
  const pkiDir = join(dir, 'pki');
  await Promise.all([mkdir(logDir, { recursive: true }), mkdir(pkiDir, { recursive: true })]);
  // A reused --dir starts from a fresh etcd: its old PKI would not match the new one.
  await rm(join(dir, 'etcd'), { recursive: true, force: true });

  const processes = new Map<string, SupervisedProcess>();
  const stopAll = async (): Promise<void> => {
    // Reverse start order: the API server's clients first (together), so nothing logs errors about a
    // vanished API server, then the API server, then etcd.
    const stopTimed = async (name: string): Promise<void> => {
      const proc = processes.get(name);
      if (!proc?.running) return;
      const t0 = Date.now();
      await proc.stop();
      onProgress(`stopped ${name} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    };
    await Promise.all(['kwok', 'kube-scheduler', 'kube-controller-manager'].map(stopTimed));
    await stopTimed('kube-apiserver');
    await stopTimed('etcd');
    stopReaper();
    if (ownsDir) {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      unregisterTempDir(dir);
    }
  };

  try {
    const [pki, ports] = await Promise.all([
      createControlPlanePki(pkiDir),
      (async (): Promise<Ports> => ({
        etcdClient: await freePort(),
        etcdPeer: await freePort(),
        apiserver: await freePort(),
        controllerManager: await freePort(),
        scheduler: await freePort(),
      }))(),
    ]);
    const server = `https://127.0.0.1:${ports.apiserver}`;
    const kubeconfigPath = join(dir, 'kubeconfig');
    const kcmKubeconfig = join(dir, 'kube-controller-manager.kubeconfig');
    const schedulerKubeconfig = join(dir, 'kube-scheduler.kubeconfig');
    const kwokKubeconfig = join(dir, 'kwok.kubeconfig');
    const stagesPath = join(dir, 'kwok-stages.yaml');
    await Promise.all([
      writeKubeconfig(kubeconfigPath, server, pki.ca.certPem, 'admin', pki.clients.admin),
      writeKubeconfig(kcmKubeconfig, server, pki.ca.certPem, 'system:kube-controller-manager', pki.clients.controllerManager),
      writeKubeconfig(schedulerKubeconfig, server, pki.ca.certPem, 'system:kube-scheduler', pki.clients.scheduler),
      writeKubeconfig(kwokKubeconfig, server, pki.ca.certPem, 'kwok', pki.clients.kwok),
      writeFile(stagesPath, kwokStagesYaml()),
    ]);
    const adminTls = { ca: pki.ca.certPem, cert: pki.clients.admin.certPem, key: pki.clients.admin.keyPem };

    onProgress(`starting etcd on 127.0.0.1:${ports.etcdClient}`);
    const etcd = spawnSupervised({
      name: 'etcd',
      command: binaries.etcd,
      logDir,
      args: [
        '--name=kubeloop',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-cluster=kubeloop=http://127.0.0.1:${ports.etcdPeer}`,
        // Test data: durability is not worth an fsync per write.
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
    });
    processes.set('etcd', etcd);
    await etcd.waitUntil('healthy', async () => (await get(`http://127.0.0.1:${ports.etcdClient}/health`)).body.includes('"health":"true"'), START_TIMEOUT_MS);

    const startApiserver = async (): Promise<void> => {
      onProgress(`starting kube-apiserver on ${server}`);
      const apiserver = spawnSupervised({ name: 'kube-apiserver', command: binaries.kubeApiserver, logDir, args: apiserverArgs(pki, ports, dir) });
      processes.set('kube-apiserver', apiserver);
      await apiserver.waitUntil('ready', async () => (await get(`${server}/readyz`, adminTls)).status === 200, START_TIMEOUT_MS);
    };
    await startApiserver();

    onProgress('starting kube-controller-manager, kube-scheduler and kwok');
    const kcm = spawnSupervised({
      name: 'kube-controller-manager',
      command: binaries.kubeControllerManager,
      logDir,
      args: [
        ...componentArgs(kcmKubeconfig, ports.controllerManager, join(dir, 'kcm-certs')),
        // Each controller acts as its own service account, so RBAC matches a real cluster.
        '--use-service-account-credentials=true',
        `--root-ca-file=${pki.caCert}`,
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        '--controllers=*',
        '--v=1',
      ],
    });
    processes.set('kube-controller-manager', kcm);
    const scheduler = spawnSupervised({
      name: 'kube-scheduler',
      command: binaries.kubeScheduler,
      logDir,
      args: [...componentArgs(schedulerKubeconfig, ports.scheduler, join(dir, 'scheduler-certs')), '--v=1'],
    });
    processes.set('kube-scheduler', scheduler);
    const kwok = spawnSupervised({
      name: 'kwok',
      command: binaries.kwok,
      logDir,
      args: [`--kubeconfig=${kwokKubeconfig}`, `--config=${stagesPath}`, '--manage-all-nodes=true', '--cidr=10.244.0.1/16', '--node-ip=10.96.0.1'],
    });
    processes.set('kwok', kwok);

    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const nodeNames = Array.from({ length: opts.nodes ?? 2 }, (_, i) => `kwok-node-${i}`);
    await Promise.all(
      nodeNames.map((name) =>
        core.createNode({
          body: {
            metadata: {
              name,
              annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
              labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
            },
          },
        }),
      ),
    );
    const healthz = (port: number) => async (): Promise<boolean> => (await get(`https://127.0.0.1:${port}/healthz`, { insecure: true })).status === 200;
    const nodesReady = async (): Promise<boolean> => {
      const nodes = await core.listNode();
      return nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= nodeNames.length;
    };
    // Pods need their namespace's default ServiceAccount (ServiceAccount admission); its creation
    // also proves the controller manager is reconciling.
    const defaultServiceAccount = async (): Promise<boolean> => !!(await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }));
    // One progress line per check says where the start time goes (the controller manager is usually last).
    const noted = (what: string, wait: Promise<void>): Promise<void> =>
      wait.then(() => onProgress(`${what} after ${((Date.now() - started) / 1000).toFixed(1)}s`));
    await Promise.all([
      noted('kube-controller-manager healthy', kcm.waitUntil('healthy', healthz(ports.controllerManager), START_TIMEOUT_MS)),
      noted('kube-scheduler healthy', scheduler.waitUntil('healthy', healthz(ports.scheduler), START_TIMEOUT_MS)),
      noted('kwok nodes Ready', kwok.waitUntil('managing the nodes (all Ready)', nodesReady, START_TIMEOUT_MS)),
      noted('default ServiceAccount created', kcm.waitUntil('creating service accounts', defaultServiceAccount, START_TIMEOUT_MS)),
    ]);
    onProgress(`control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${server}, kubeconfig ${kubeconfigPath}`);

    return {
      kubeconfigPath,
      server,
      dir,
      binaries,
      kubeConfig(): KubeConfig {
        const config = new KubeConfig();
        config.loadFromFile(kubeconfigPath);
        return config;
      },
      async restartApiServer(): Promise<void> {
        await processes.get('kube-apiserver')?.stop();
        await startApiserver();
      },
      pids(): Record<string, number> {
        const out: Record<string, number> = {};
        for (const [name, proc] of processes) if (proc.running && proc.pid) out[name] = proc.pid;
        return out;
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
