// Starts one real node beside a local control plane's kwok nodes: containerd, kubelet, kube-proxy and CoreDNS
// inside the node's own namespaces (node-namespace.ts), the pause image imported, a forwarder from the veth to
// the loopback API server; and tears all of it down, in reverse, whatever stage a start reached.
import { createServer, connect, type Server } from 'node:net';
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, DiscoveryV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { writeKubeconfig } from '../kubeconfig-file.ts';
import { issueCertificate, type CertKeyPem } from '../pki.ts';
import { spawnSupervised, type SupervisedProcess } from '../supervisor.ts';
import { packOciArchive, writeOciLayout } from '../../image/oci-image.ts';
import type { NodeBinaries } from '../node-binaries.ts';
import { CNI_BIN_DIR } from './preflight.ts';
import { acquireMachineLock } from './machine-lock.ts';
import { importIntoRealNode } from './image-import.ts';
import { containerdConfig, cniConfig, corefile, kubeletConfig, kubeProxyConfig, NODE_NET, nodePaths, PAUSE_IMAGE, REAL_NODE_NAME, type NodePaths } from './node-config.ts';
import { createNodeNamespace, removeVeth, wireNodeNetwork, type NodeNamespace } from './node-namespace.ts';
import { createNodeCgroupRoot, killNodeProcessesAndCgroups, restoreKernelTunables, saveKernelTunables } from './node-teardown.ts';
import { KERNEL_TUNABLES_FILE } from '../orphan-reaper.ts';

const run = promisify(execFile);
const READY_TIMEOUT_MS = 180_000;

export interface RealNodeContext {
  dir: string;
  logDir: string;
  apiserverPort: number;
  ca: CertKeyPem;
  caCertFile: string;
  adminKubeconfig: string;
  binaries: NodeBinaries;
  onProgress: (line: string) => void;
}

export interface RealNode {
  name: string;
  /** Imports an OCI archive into the node's containerd (images for `imagePullPolicy: Never`). */
  importImage(archive: string): Promise<void>;
  /** PIDs of the node's programs, by name. */
  pids(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * The API server binds loopback only; the node reaches it at the veth's host address on 443, as pods reach a real
 * cluster's (the chart's NetworkPolicies let the router and webhook out to 443 and 6443 only). One real node per
 * machine, and only this address: no other local plane binds it.
 */
function startApiserverForwarder(port: number): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(port, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    const close = (): void => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(NODE_NET.apiserverPort, NODE_NET.hostAddress, () => resolve(server));
  });
}

async function clientKubeconfig(ctx: RealNodeContext, path: string, commonName: string, organizations?: string[]): Promise<void> {
  const cert = await issueCertificate(ctx.ca, { commonName, usage: 'client', ...(organizations ? { organizations } : {}) });
  await writeKubeconfig(path, `https://${NODE_NET.hostAddress}:${NODE_NET.apiserverPort}`, ctx.ca.certPem, commonName, cert);
}

async function writeNodeFiles(ctx: RealNodeContext, p: NodePaths): Promise<void> {
  await Promise.all([mkdir(p.cniConfDir, { recursive: true }), mkdir(p.kubeletRoot, { recursive: true }), mkdir(p.podLogs, { recursive: true }), mkdir(join(p.dir, 'run'), { recursive: true })]);
  await Promise.all([
    writeFile(p.containerdConfig, containerdConfig(p, join(ctx.binaries.containerdShim, '..'), CNI_BIN_DIR)),
    writeFile(join(p.cniConfDir, '10-kubeloop.conflist'), cniConfig(p)),
    writeFile(p.kubeletConfig, kubeletConfig(p, ctx.caCertFile)),
    writeFile(p.kubeProxyConfig, kubeProxyConfig(p)),
    writeFile(p.corefile, corefile(p)),
    writeFile(p.resolvConf, '# no upstream DNS: cluster names only\n'),
    // The Node authorizer and NodeRestriction know a kubelet by exactly this name and group.
    clientKubeconfig(ctx, p.kubeletKubeconfig, `system:node:${REAL_NODE_NAME}`, ['system:nodes']),
    // Bound by the built-in system:node-proxier ClusterRoleBinding.
    clientKubeconfig(ctx, p.kubeProxyKubeconfig, 'system:kube-proxy'),
    clientKubeconfig(ctx, p.corednsKubeconfig, 'system:kubeloop:coredns'),
    clientKubeconfig(ctx, p.kubeRouterKubeconfig, 'system:kubeloop:kube-router'),
  ]);
}

/** The pause image from the cached pause binary: one layer, entrypoint /pause. */
async function importPauseImage(ctx: RealNodeContext, importImage: (archive: string) => Promise<void>, p: NodePaths): Promise<void> {
  const rootfs = join(p.dir, 'pause-rootfs');
  await mkdir(rootfs, { recursive: true });
  await run('cp', [ctx.binaries.pause, join(rootfs, 'pause')]);
  const layout = join(p.dir, 'pause-oci');
  await writeOciLayout(layout, { name: PAUSE_IMAGE, layers: [rootfs], config: { Entrypoint: ['/pause'], User: '65535:65535' } });
  await packOciArchive(layout, `${layout}.tar`);
  await importImage(`${layout}.tar`);
  await rm(rootfs, { recursive: true, force: true });
}

/** CoreDNS runs in the node's netns; the kube-dns Service points at it, and the kubernetes Service at the forwarder. */
async function publishClusterServices(ctx: RealNodeContext): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(ctx.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  // CoreDNS reads Services and their endpoints; kube-router's firewall reads pods, namespaces, policies and nodes.
  const readers: Record<string, { apiGroups: string[]; resources: string[]; verbs: string[] }[]> = {
    'system:kubeloop:coredns': [
      { apiGroups: [''], resources: ['services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ],
    'system:kubeloop:kube-router': [
      { apiGroups: [''], resources: ['pods', 'namespaces', 'nodes', 'services', 'endpoints'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
    ],
  };
  for (const [name, rules] of Object.entries(readers)) {
    await rbac.createClusterRole({ body: { metadata: { name }, rules } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }],
      },
    });
  }
  await core.createNamespacedService({
    namespace: 'kube-system',
    body: {
      metadata: { name: 'kube-dns', labels: { 'k8s-app': 'kube-dns' } },
      spec: {
        clusterIP: NODE_NET.dnsServiceIp,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        ],
      },
    },
  });
  const slice = (name: string, namespace: string, service: string, address: string, ports: { name: string; port: number; protocol: string }[]) =>
    discovery.createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name, labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'kubeloop-real-node' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [address], conditions: { ready: true } }],
        ports,
      },
    });
  await slice('kube-dns-real-node', 'kube-system', 'kube-dns', NODE_NET.nodeAddress, [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
  ]);
  // 1.37 runs without the endpoint reconciler (loopback addresses are refused): pods reach the API server here.
  await slice('kubernetes-real-node', 'default', 'kubernetes', NODE_NET.hostAddress, [{ name: 'https', port: NODE_NET.apiserverPort, protocol: 'TCP' }]);
}

async function nodeReady(ctx: RealNodeContext): Promise<boolean> {
  const kc = new KubeConfig();
  kc.loadFromFile(ctx.adminKubeconfig);
  const node = await kc.makeApiClient(CoreV1Api).readNode({ name: REAL_NODE_NAME });
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export async function startRealNode(ctx: RealNodeContext): Promise<RealNode> {
  const started = Date.now();
  const p = nodePaths(ctx.dir);
  const procs = new Map<string, SupervisedProcess>();
  let ns: NodeNamespace | undefined;
  let forwarder: Server | undefined;
  let tunables: Record<string, string> | undefined;
  const release = await acquireMachineLock();
  const importImage = (archive: string): Promise<void> => importIntoRealNode(p.dir, archive);
  let stopped = false;
  const stop = async (): Promise<void> => {
    // Idempotent: a second stop must not release a lock another node may hold by then.
    if (stopped) return;
    stopped = true;
    for (const name of ['kube-router', 'coredns', 'kube-proxy', 'kubelet']) await procs.get(name)?.stop(10_000);
    await killNodeProcessesAndCgroups(undefined, undefined);
    await procs.get('containerd')?.stop(10_000);
    if (ns) {
      await ns.holder.stop();
      await killNodeProcessesAndCgroups(ns.netNs, ns.mntNs);
    }
    await removeVeth();
    forwarder?.close();
    if (tunables) await restoreKernelTunables(tunables);
    await rm(p.dir, { recursive: true, force: true, maxRetries: 3 });
    await release();
  };
  try {
    await mkdir(p.dir, { recursive: true });
    await writeNodeFiles(ctx, p);
    ns = await createNodeNamespace(ctx.binaries.pause, p.dir, ctx.logDir);
    await wireNodeNetwork(ns);
    forwarder = await startApiserverForwarder(ctx.apiserverPort);
    const launch = (name: string, command: string, args: string[]): SupervisedProcess => {
      const proc = spawnSupervised({ name, logDir: ctx.logDir, ...(ns as NodeNamespace).enter(command, args) });
      procs.set(name, proc);
      return proc;
    };
    ctx.onProgress(`starting the real node ${REAL_NODE_NAME}: containerd, kubelet, kube-proxy, CoreDNS, kube-router in their own network namespace (veth ${NODE_NET.hostInterface})`);
    const containerd = launch('containerd', ctx.binaries.containerd, ['--config', p.containerdConfig, '--log-level', 'warn']);
    await containerd.waitUntil('serving', async () => (await ns?.exec(ctx.binaries.ctr, ['--address', p.containerdSocket, 'version']).then(() => true, () => false)) ?? false, 60_000);
    await importPauseImage(ctx, importImage, p);
    tunables = await saveKernelTunables(join(p.dir, KERNEL_TUNABLES_FILE));
    await createNodeCgroupRoot();
    const kubelet = launch('kubelet', ctx.binaries.kubelet, [
      `--config=${p.kubeletConfig}`,
      `--kubeconfig=${p.kubeletKubeconfig}`,
      `--root-dir=${p.kubeletRoot}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-ip=${NODE_NET.nodeAddress}`,
      '--node-labels=kubeloop.dev/real-node=true',
      '--v=1',
    ]);
    launch('kube-proxy', ctx.binaries.kubeProxy, [`--config=${p.kubeProxyConfig}`, '--v=1']);
    await publishClusterServices(ctx);
    launch('coredns', ctx.binaries.coredns, ['-conf', p.corefile]);
    await kubelet.waitUntil('Ready', () => nodeReady(ctx), READY_TIMEOUT_MS);
    // The NetworkPolicy enforcer, once its Node exists (it exits without one): only its firewall (the bridge CNI and
    // kube-proxy do the rest), in the netns' iptables.
    launch('kube-router', ctx.binaries.kubeRouter, [
      `--kubeconfig=${p.kubeRouterKubeconfig}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      '--run-firewall=true',
      '--run-router=false',
      '--run-service-proxy=false',
      '--enable-cni=false',
      '--health-port=0',
      '--metrics-port=0',
    ]);
    ctx.onProgress(`real node ${REAL_NODE_NAME} Ready after ${((Date.now() - started) / 1000).toFixed(1)}s (pods ${NODE_NET.podCidr}, services ${NODE_NET.serviceCidr})`);
  } catch (error) {
    await stop().catch((stopError: unknown) => ctx.onProgress(`real node teardown after a failed start: ${String(stopError)}`));
    throw error;
  }
  return {
    name: REAL_NODE_NAME,
    importImage,
    pids: () => Object.fromEntries([...procs].filter(([, proc]) => proc.running && proc.pid).map(([name, proc]) => [name, proc.pid as number])),
    stop,
  };
}
