// The real node's addresses and the configuration files of its programs (containerd, kubelet, kube-proxy, the
// CNI bridge, CoreDNS), as pure functions of the node's directory and the API server's port.
import { join } from 'node:path';

/**
 * Fixed addresses: the machine-wide lock allows one real node at a time. The veth is the node's only link to
 * the host (a /30); pods and this plane's Services get ranges no other local control plane uses (they keep
 * 10.0.0.0/24, which nothing routes), so the node's kube-proxy captures only its own plane's Services.
 */
export const NODE_NET = {
  hostInterface: 'kl-node0',
  hostAddress: '10.250.0.1',
  /** Where the node and its pods reach the API server (a forwarder to its loopback port). */
  apiserverPort: 443,
  nodeAddress: '10.250.0.2',
  linkPrefix: 30,
  podCidr: '10.251.0.0/24',
  podGateway: '10.251.0.1',
  serviceCidr: '10.252.0.0/24',
  kubernetesServiceIp: '10.252.0.1',
  dnsServiceIp: '10.252.0.10',
} as const;

export const REAL_NODE_NAME = 'kubeloop-real-node';
/** Every cgroup the kubelet makes lives below this one, in each hierarchy: teardown removes it whole. */
export const NODE_CGROUP_ROOT = 'kubeloop-node';
/** The sandbox image, made from the cached pause binary and imported at start (no registry is reachable). */
export const PAUSE_IMAGE = 'kubeloop.local/pause:v1';
/** Taint on the kwok nodes of a plane with a real node, so workloads land where containers really run. */
export const FAKE_NODE_TAINT = { key: 'kubeloop.dev/fake-node', value: 'true', effect: 'NoSchedule' } as const;

export interface NodePaths {
  dir: string;
  containerdConfig: string;
  containerdSocket: string;
  containerdRoot: string;
  containerdState: string;
  cniConfDir: string;
  /** Where host-local records the pods' addresses (its dataDir): dies with the node. */
  cniIpamDir: string;
  kubeletConfig: string;
  kubeletKubeconfig: string;
  kubeletRoot: string;
  podLogs: string;
  kubeProxyConfig: string;
  kubeProxyKubeconfig: string;
  corefile: string;
  corednsKubeconfig: string;
  kubeRouterKubeconfig: string;
  resolvConf: string;
}

export function nodePaths(dir: string): NodePaths {
  return {
    dir,
    containerdConfig: join(dir, 'containerd.toml'),
    containerdSocket: join(dir, 'run', 'containerd.sock'),
    containerdRoot: join(dir, 'containerd'),
    containerdState: join(dir, 'run', 'containerd'),
    cniConfDir: join(dir, 'cni'),
    cniIpamDir: join(dir, 'cni-ipam'),
    kubeletConfig: join(dir, 'kubelet.yaml'),
    kubeletKubeconfig: join(dir, 'kubelet.kubeconfig'),
    kubeletRoot: join(dir, 'kubelet'),
    podLogs: join(dir, 'pod-logs'),
    kubeProxyConfig: join(dir, 'kube-proxy.yaml'),
    kubeProxyKubeconfig: join(dir, 'kube-proxy.kubeconfig'),
    corefile: join(dir, 'Corefile'),
    corednsKubeconfig: join(dir, 'coredns.kubeconfig'),
    kubeRouterKubeconfig: join(dir, 'kube-router.kubeconfig'),
    resolvConf: join(dir, 'resolv.conf'),
  };
}

/**
 * containerd v2. restrict_oom_score_adj: a VM without CAP_SYS_RESOURCE cannot lower oom_score_adj, and every
 * sandbox otherwise fails ("can't get final child's PID from pipe: EOF"). Network namespaces, runc's state and
 * the sockets stay under the node's directory or its private /run, so nothing lands in the host's paths.
 */
export function containerdConfig(p: NodePaths, shimDir: string, cniBinDir: string): string {
  return `version = 3
root = ${JSON.stringify(p.containerdRoot)}
state = ${JSON.stringify(p.containerdState)}

[grpc]
  address = ${JSON.stringify(p.containerdSocket)}

[ttrpc]
  address = ${JSON.stringify(`${p.containerdSocket}.ttrpc`)}

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = ${JSON.stringify(PAUSE_IMAGE)}

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [${JSON.stringify(cniBinDir)}]
    conf_dir = ${JSON.stringify(p.cniConfDir)}
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = ${JSON.stringify(join(shimDir, 'containerd-shim-runc-v2'))}
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = ${JSON.stringify(join(p.dir, 'run', 'runc'))}
        SystemdCgroup = false
`;
}

/**
 * The bridge every pod joins; the netns routes pod traffic to the host over the veth (no masquerade needed).
 * Addresses are handed out from the node's own directory: host-local's default (/var/lib/cni/networks) outlives
 * the node, and a node torn down with pods still running never releases theirs, so the range ran out after a
 * few hundred runs and every new pod stayed ContainerCreating. Each node has a fresh netns: nothing to keep.
 */
export function cniConfig(p: Pick<NodePaths, 'cniIpamDir'>): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'kubeloop',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir: p.cniIpamDir, ranges: [[{ subnet: NODE_NET.podCidr, gateway: NODE_NET.podGateway }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/**
 * Everything the kubelet would otherwise write host-wide is pointed into the node's directory (root, pod logs,
 * cgroups under NODE_CGROUP_ROOT). failCgroupV1 false: this machine's /sys/fs/cgroup is v1 (hybrid).
 */
export function kubeletConfig(p: NodePaths, caFile: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_NET.nodeAddress}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: ${JSON.stringify(caFile)} }
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupRoot: /${NODE_CGROUP_ROOT}
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://${p.containerdSocket}
imageServiceEndpoint: unix://${p.containerdSocket}
podLogsDir: ${JSON.stringify(p.podLogs)}
clusterDNS: [${NODE_NET.dnsServiceIp}]
clusterDomain: cluster.local
resolvConf: ${JSON.stringify(p.resolvConf)}
podCIDR: ${NODE_NET.podCidr}
maxPods: 60
serializeImagePulls: false
# Loaded shared machine: evict nothing, collect no images, restart nothing on kernel defaults.
evictionHard: { memory.available: "1Mi", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
protectKernelDefaults: false
makeIPTablesUtilChains: false
enableServer: true
registerNode: true
staticPodPath: ""
shutdownGracePeriod: 0s
`;
}

/** iptables mode inside the node's netns; conntrack limits left alone (nf_conntrack_max is host-wide). */
export function kubeProxyConfig(p: NodePaths): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: ${JSON.stringify(p.kubeProxyKubeconfig)}
hostnameOverride: ${REAL_NODE_NAME}
bindAddress: ${NODE_NET.nodeAddress}
clusterCIDR: ${NODE_NET.podCidr}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`;
}

/** Cluster DNS only (no upstream is reachable); health and ready on the netns' loopback. */
export function corefile(p: NodePaths): string {
  return `.:53 {
    errors
    health 127.0.0.1:8080
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${p.corednsKubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
`;
}
