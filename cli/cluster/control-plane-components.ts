// The steps of one local control plane start: its files (ports, PKI, kubeconfigs), then etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with its fake nodes, each awaited.
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { ClusterBinaries } from './binaries.ts';
import { freePort } from './free-port.ts';
import { writeKubeconfig } from './kubeconfig-file.ts';
import { kwokStagesYaml } from './kwok-stages.ts';
import { createControlPlanePki, FRONT_PROXY_CLIENT_NAME, type ControlPlanePki } from './pki.ts';
import { spawnSupervised, type SupervisedProcess } from './supervisor.ts';
import { writeWebhookClientAuth } from './webhook-client-auth.ts';
import { apiserverVersionArgs } from './versions.ts';
import { FAKE_NODE_TAINT, NODE_NET } from './real-node/node-config.ts';

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

/**
 * A plane with a real node gets the Node authorizer (its kubelet's identity), the node's own Service range (so
 * its kube-proxy never captures another local plane's 10.0.0.0/24), kubelets reached at their InternalIP, and a
 * client certificate for the kubelet API (logs, exec). kwok-only planes keep plain RBAC and 10.0.0.0/24.
 */
function planeNetworkArgs(realNode: PlaneFiles['realNode']): string[] {
  if (!realNode) return ['--authorization-mode=RBAC', '--service-cluster-ip-range=10.0.0.0/24'];
  return [
    '--authorization-mode=Node,RBAC',
    `--service-cluster-ip-range=${NODE_NET.serviceCidr}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--kubelet-client-certificate=${realNode.kubeletClientCert}`,
    `--kubelet-client-key=${realNode.kubeletClientKey}`,
  ];
}

function apiserverArgs({ pki, ports, apiserverExtraArgs, realNode }: PlaneFiles, dir: string, version: string): string[] {
  return [
    // etcd over mutual TLS with its own CA: no other local process can read or write the cluster's data.
    `--etcd-servers=https://127.0.0.1:${ports.etcdClient}`,
    `--etcd-cafile=${pki.etcdCaCert}`,
    `--etcd-certfile=${pki.etcdClientCert}`,
    `--etcd-keyfile=${pki.etcdClientKey}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${ports.apiserver}`,
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    ...planeNetworkArgs(realNode),
    '--allow-privileged=true',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    // The aggregation layer (APIService): the API server authenticates every caller, then forwards to the
    // aggregated API with the front-proxy client certificate and the caller in X-Remote-* headers. Cluster IP
    // routing (the default): an ExternalName Service then reaches a process on this machine (no kube-proxy here).
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_NAME}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
    `--proxy-client-key-file=${pki.frontProxyClientKey}`,
    // The default admission plugins stay on: ServiceAccount, NamespaceLifecycle, Mutating/ValidatingAdmissionWebhook...
    '--profiling=false',
    '--v=1',
    ...apiserverVersionArgs(version),
    ...apiserverExtraArgs,
  ];
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

/** Where one start runs its processes, and the processes started so far (stopped in reverse on failure). */
export interface Launch {
  binaries: ClusterBinaries;
  dir: string;
  logDir: string;
  processes: Map<string, SupervisedProcess>;
  onProgress: (line: string) => void;
  /** Added to kube-apiserver's flags (its tracing configuration, apiserver-tracing.ts). */
  apiserverExtraArgs?: string[];
  /** The Kubernetes version of the binaries: which feature gates kube-apiserver knows. */
  kubernetesVersion: string;
}

/** What the components are started with: ports, PKI, the kubeconfig of each, and kwok's stages. */
export interface PlaneFiles {
  pki: ControlPlanePki;
  ports: Ports;
  server: string;
  kubeconfigPath: string;
  kcmKubeconfig: string;
  schedulerKubeconfig: string;
  kwokKubeconfig: string;
  stagesPath: string;
  /** Flags naming files written beside the PKI: the webhook client certificate's admission configuration. */
  apiserverExtraArgs: string[];
  /** Set when a real node joins: the API server's client certificate for kubelets (system:masters). */
  realNode?: { kubeletClientCert: string; kubeletClientKey: string };
}

async function freePorts(): Promise<Ports> {
  return {
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
    apiserver: await freePort(),
    controllerManager: await freePort(),
    scheduler: await freePort(),
  };
}

export async function writePlaneFiles(dir: string, pkiDir: string, realNode = false): Promise<PlaneFiles> {
  // With a real node the API server is also reached over the veth and through the node's `kubernetes` Service.
  const extraHosts = realNode ? [NODE_NET.hostAddress, NODE_NET.kubernetesServiceIp] : [];
  const [pki, ports] = await Promise.all([createControlPlanePki(pkiDir, extraHosts), freePorts()]);
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const files: PlaneFiles = {
    pki,
    ports,
    server,
    kubeconfigPath: join(dir, 'kubeconfig'),
    kcmKubeconfig: join(dir, 'kube-controller-manager.kubeconfig'),
    schedulerKubeconfig: join(dir, 'kube-scheduler.kubeconfig'),
    kwokKubeconfig: join(dir, 'kwok.kubeconfig'),
    stagesPath: join(dir, 'kwok-stages.yaml'),
    apiserverExtraArgs: [],
  };
  const [webhookClientArgs] = await Promise.all([
    writeWebhookClientAuth(dir, pki.clients.webhookClient),
    writeKubeconfig(files.kubeconfigPath, server, pki.ca.certPem, 'admin', pki.clients.admin),
    writeKubeconfig(files.kcmKubeconfig, server, pki.ca.certPem, 'system:kube-controller-manager', pki.clients.controllerManager),
    writeKubeconfig(files.schedulerKubeconfig, server, pki.ca.certPem, 'system:kube-scheduler', pki.clients.scheduler),
    writeKubeconfig(files.kwokKubeconfig, server, pki.ca.certPem, 'kwok', pki.clients.kwok),
    writeFile(files.stagesPath, kwokStagesYaml()),
  ]);
  files.apiserverExtraArgs.push(...webhookClientArgs);
  if (realNode) {
    files.realNode = { kubeletClientCert: join(pkiDir, 'kubelet-client.crt'), kubeletClientKey: join(pkiDir, 'kubelet-client.key') };
    await writeFile(files.realNode.kubeletClientCert, pki.clients.admin.certPem);
    await writeFile(files.realNode.kubeletClientKey, pki.clients.admin.keyPem, { mode: 0o600 });
  }
  return files;
}

/**
 * One member, so the peer port is never joined; it still answers (/members, raft) to whoever connects, so
 * it speaks mutual TLS too: only a certificate from etcd's own CA gets in, as on the client port.
 */
function etcdPeerArgs(pki: ControlPlanePki, port: number): string[] {
  const url = `https://127.0.0.1:${port}`;
  return [
    `--listen-peer-urls=${url}`,
    `--initial-advertise-peer-urls=${url}`,
    `--initial-cluster=kubeloop=${url}`,
    `--peer-cert-file=${pki.etcdPeerCert}`,
    `--peer-key-file=${pki.etcdPeerKey}`,
    '--peer-client-cert-auth=true',
    `--peer-trusted-ca-file=${pki.etcdCaCert}`,
  ];
}

export async function startEtcd(launch: Launch, { ports, pki }: PlaneFiles): Promise<void> {
  launch.onProgress(`starting etcd on 127.0.0.1:${ports.etcdClient}`);
  const etcd = spawnSupervised({
    name: 'etcd',
    command: launch.binaries.etcd,
    logDir: launch.logDir,
    args: [
      '--name=kubeloop',
      `--data-dir=${join(launch.dir, 'etcd')}`,
      `--listen-client-urls=https://127.0.0.1:${ports.etcdClient}`,
      `--advertise-client-urls=https://127.0.0.1:${ports.etcdClient}`,
      // Clients must present a certificate from etcd's own CA (only the API server has one).
      `--cert-file=${pki.etcdServerCert}`,
      `--key-file=${pki.etcdServerKey}`,
      '--client-cert-auth=true',
      `--trusted-ca-file=${pki.etcdCaCert}`,
      ...etcdPeerArgs(pki, ports.etcdPeer),
      // Test data: durability is not worth an fsync per write.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
  });
  launch.processes.set('etcd', etcd);
  const client = { ca: pki.etcdClient.caPem, cert: pki.etcdClient.certPem, key: pki.etcdClient.keyPem };
  await etcd.waitUntil('healthy', async () => (await get(`https://127.0.0.1:${ports.etcdClient}/health`, client)).body.includes('"health":"true"'), START_TIMEOUT_MS);
}

/** Also how restartApiServer brings it back, on the same port. */
export async function startApiserver(launch: Launch, files: PlaneFiles): Promise<void> {
  const { pki, server } = files;
  const adminTls = { ca: pki.ca.certPem, cert: pki.clients.admin.certPem, key: pki.clients.admin.keyPem };
  launch.onProgress(`starting kube-apiserver on ${server}`);
  // The webhook client certificate's flags come with the plane's files; tracing's, when asked for, with the launch.
  const apiserver = spawnSupervised({ name: 'kube-apiserver', command: launch.binaries.kubeApiserver, logDir: launch.logDir, args: [...apiserverArgs(files, launch.dir, launch.kubernetesVersion), ...(launch.apiserverExtraArgs ?? [])] });
  launch.processes.set('kube-apiserver', apiserver);
  await apiserver.waitUntil('ready', async () => (await get(`${server}/readyz`, adminTls)).status === 200, START_TIMEOUT_MS);
}

interface Components {
  kcm: SupervisedProcess;
  scheduler: SupervisedProcess;
  kwok: SupervisedProcess;
}

export function startComponents(launch: Launch, files: PlaneFiles): Components {
  const { binaries, logDir, dir } = launch;
  const { pki, ports } = files;
  launch.onProgress('starting kube-controller-manager, kube-scheduler and kwok');
  const kcm = spawnSupervised({
    name: 'kube-controller-manager',
    command: binaries.kubeControllerManager,
    logDir,
    args: [
      ...componentArgs(files.kcmKubeconfig, ports.controllerManager, join(dir, 'kcm-certs')),
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
  launch.processes.set('kube-controller-manager', kcm);
  const scheduler = spawnSupervised({
    name: 'kube-scheduler',
    command: binaries.kubeScheduler,
    logDir,
    args: [...componentArgs(files.schedulerKubeconfig, ports.scheduler, join(dir, 'scheduler-certs')), '--v=1'],
  });
  launch.processes.set('kube-scheduler', scheduler);
  const kwok = spawnSupervised({
    name: 'kwok',
    command: binaries.kwok,
    logDir,
    // The node Leases are the nodes' heartbeat: without them the node lifecycle controller finds every node
    // silent after its 50 s grace, marks it NotReady and all its pods Ready=False, which no kwok stage undoes
    // (a Deployment then never reports its replicas available). kwok renews them every quarter duration.
    // Only the fake nodes (annotated as kwok's own): a real node beside them belongs to its kubelet.
    args: [`--kubeconfig=${files.kwokKubeconfig}`, `--config=${files.stagesPath}`, '--manage-all-nodes=false', `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`, '--cidr=10.244.0.1/16', '--node-ip=10.96.0.1', '--node-lease-duration-seconds=40'],
  });
  launch.processes.set('kwok', kwok);
  return { kcm, scheduler, kwok };
}

const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** Beside a real node the fake ones are tainted, so workloads land where containers really run. */
async function createFakeNodes(core: CoreV1Api, count: number, tainted: boolean): Promise<string[]> {
  const nodeNames = Array.from({ length: count }, (_, i) => `kwok-node-${i}`);
  await Promise.all(
    nodeNames.map((name) =>
      core.createNode({
        body: {
          metadata: {
            name,
            annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
            labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
          },
          ...(tainted ? { spec: { taints: [{ ...FAKE_NODE_TAINT }] } } : {}),
        },
      }),
    ),
  );
  return nodeNames;
}

/** The kwok nodes created, then every component healthy, the nodes Ready and the default ServiceAccount made. */
export async function addNodesAndWaitUntilReady(launch: Launch, files: PlaneFiles, { kcm, scheduler, kwok }: Components, nodes: number, started: number): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(files.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const nodeNames = await createFakeNodes(core, nodes, files.realNode !== undefined);
  const healthz = (port: number) => async (): Promise<boolean> => (await get(`https://127.0.0.1:${port}/healthz`, { insecure: true })).status === 200;
  const nodesReady = async (): Promise<boolean> => {
    const list = await core.listNode();
    return list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= nodeNames.length;
  };
  // Pods need their namespace's default ServiceAccount (ServiceAccount admission); its creation
  // also proves the controller manager is reconciling.
  const defaultServiceAccount = async (): Promise<boolean> => !!(await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }));
  // One progress line per check says where the start time goes (the controller manager is usually last).
  const noted = (what: string, wait: Promise<void>): Promise<void> =>
    wait.then(() => launch.onProgress(`${what} after ${((Date.now() - started) / 1000).toFixed(1)}s`));
  const { ports } = files;
  await Promise.all([
    noted('kube-controller-manager healthy', kcm.waitUntil('healthy', healthz(ports.controllerManager), START_TIMEOUT_MS)),
    noted('kube-scheduler healthy', scheduler.waitUntil('healthy', healthz(ports.scheduler), START_TIMEOUT_MS)),
    noted('kwok nodes Ready', kwok.waitUntil('managing the nodes (all Ready)', nodesReady, START_TIMEOUT_MS)),
    noted('default ServiceAccount created', kcm.waitUntil('creating service accounts', defaultServiceAccount, START_TIMEOUT_MS)),
  ]);
}
