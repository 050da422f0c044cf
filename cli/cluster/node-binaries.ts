// The real node's programs (`kubeloop cluster up --real-node`): containerd v2 with its runc shim and ctr, kubelet
// and kube-proxy, a CoreDNS with only the plugins a cluster needs, kube-router as the NetworkPolicy enforcer, and a
// pause binary for pod sandboxes. Built
// from the Go module proxy into the version-keyed cache like the control plane; never committed.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withBuildLock } from './binaries.ts';
import { goBuild, goVersion, runGo, versionLdflags, writeKubernetesWrapper, type ProgressFn } from './go-build.ts';
import { executable, writeWrapperModule } from './go-wrapper.ts';
import { cacheRoot, kubernetesVersion } from './versions.ts';

/** Pinned versions (Go module proxy, 2026-11): containerd v2 (Debian's 1.6 loses kubelet support at 1.38). */
export const NODE_VERSIONS = { containerd: 'v2.4.2', coredns: 'v1.15.0', kubeRouter: 'v2.1.0', pause: 'v1' } as const;

export interface NodeBinaries {
  containerd: string;
  containerdShim: string;
  ctr: string;
  kubelet: string;
  kubeProxy: string;
  coredns: string;
  /** kube-router with only its NetworkPolicy firewall on (iptables and ipset in the node's netns). */
  kubeRouter: string;
  pause: string;
}

function binDir(name: string, version: string): string {
  return join(cacheRoot(), 'bin', `${name}-${version}`);
}

/** Where each binary is cached; the Kubernetes ones follow the control plane's version. */
export function nodeBinaryPaths(kubernetes = kubernetesVersion()): NodeBinaries {
  const containerd = binDir('containerd', NODE_VERSIONS.containerd);
  const node = binDir('kubernetes-node', kubernetes);
  return {
    containerd: join(containerd, 'containerd'),
    containerdShim: join(containerd, 'containerd-shim-runc-v2'),
    ctr: join(containerd, 'ctr'),
    kubelet: join(node, 'kubelet'),
    kubeProxy: join(node, 'kube-proxy'),
    coredns: join(binDir('coredns', NODE_VERSIONS.coredns), 'coredns'),
    kubeRouter: join(binDir('kube-router', NODE_VERSIONS.kubeRouter), 'kube-router'),
    pause: join(binDir('pause', NODE_VERSIONS.pause), 'pause'),
  };
}

// CoreDNS's own main imports every plugin (cloud DNS SDKs included); a cluster DNS needs these few, which
// keeps the cold build to a fraction. Order is CoreDNS's plugin order (core/dnsserver/zdirectives.go).
const COREDNS_PLUGINS = ['errors', 'health', 'ready', 'cache', 'loop', 'loadbalance', 'kubernetes', 'forward'] as const;

function corednsMain(): string {
  const imports = COREDNS_PLUGINS.map((p) => `\t_ "github.com/coredns/coredns/plugin/${p}"`).join('\n');
  const directives = COREDNS_PLUGINS.map((p) => `"${p}"`).join(', ');
  return `package main\n\nimport (\n\t"github.com/coredns/coredns/core/dnsserver"\n\t"github.com/coredns/coredns/coremain"\n${imports}\n)\n\nfunc init() { dnsserver.Directives = []string{${directives}} }\n\nfunc main() { coremain.Run() }\n`;
}

// The sandbox's only process: sleeps until told to stop (registry.k8s.io/pause is a C program; this is its Go twin).
const PAUSE_MAIN = `package main

import (
\t"os"
\t"os/signal"
\t"syscall"
)

func main() {
\tstop := make(chan os.Signal, 1)
\tsignal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
\t<-stop
}
`;

async function buildContainerd(paths: NodeBinaries, onProgress: ProgressFn): Promise<void> {
  const version = NODE_VERSIONS.containerd;
  const module = 'github.com/containerd/containerd/v2';
  const src = join(cacheRoot(), 'src', `containerd-${version}`);
  await mkdir(src, { recursive: true });
  await writeWrapperModule(src, 'containerd', module, version, `${module}/cmd/containerd`, onProgress);
  await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (containerd)', onProgress });
  const ldflags = `-s -w -X ${module}/version.Version=${version}`;
  // No cgo: the btrfs, devmapper and zfs snapshotters are left out (overlayfs and native remain).
  const tags = ['no_btrfs', 'no_devmapper', 'no_zfs'];
  const targets: [string, string][] = [
    ['containerd', paths.containerd],
    ['containerd-shim-runc-v2', paths.containerdShim],
    ['ctr', paths.ctr],
  ];
  for (const [cmd, dest] of targets) {
    if (!(await executable(dest))) await goBuild(src, `${module}/cmd/${cmd}`, dest, ldflags, `${cmd} ${version}`, onProgress, tags);
  }
}

async function buildKubernetesNode(paths: NodeBinaries, kubernetes: string, onProgress: ProgressFn): Promise<void> {
  const src = join(cacheRoot(), 'src', `kubernetes-node-${kubernetes}`);
  await mkdir(src, { recursive: true });
  await writeKubernetesWrapper(src, kubernetes, onProgress, ['kubelet', 'kube-proxy']);
  await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (kubelet, kube-proxy)', onProgress });
  const ldflags = versionLdflags(kubernetes);
  for (const [cmd, dest] of [
    ['kubelet', paths.kubelet],
    ['kube-proxy', paths.kubeProxy],
  ] as const) {
    if (!(await executable(dest))) await goBuild(src, `k8s.io/kubernetes/cmd/${cmd}`, dest, ldflags, `${cmd} ${kubernetes}`, onProgress);
  }
}

async function buildCoredns(dest: string, onProgress: ProgressFn): Promise<void> {
  const version = NODE_VERSIONS.coredns;
  const src = join(cacheRoot(), 'src', `coredns-${version}`);
  await mkdir(src, { recursive: true });
  await writeWrapperModule(src, 'coredns', 'github.com/coredns/coredns', version, 'github.com/coredns/coredns/coremain', onProgress);
  await writeFile(join(src, 'main.go'), corednsMain());
  await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (coredns)', onProgress });
  await goBuild(src, '.', dest, `-s -w -X github.com/coredns/coredns/coremain.GitCommit=${version}`, `coredns ${version}`, onProgress);
}

async function buildKubeRouter(dest: string, onProgress: ProgressFn): Promise<void> {
  const version = NODE_VERSIONS.kubeRouter;
  const module = 'github.com/cloudnativelabs/kube-router/v2';
  const src = join(cacheRoot(), 'src', `kube-router-${version}`);
  await mkdir(src, { recursive: true });
  await writeWrapperModule(src, 'kube-router', module, version, `${module}/cmd/kube-router`, onProgress);
  await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (kube-router)', onProgress });
  await goBuild(src, `${module}/cmd/kube-router`, dest, '-s -w', `kube-router ${version}`, onProgress);
}

async function buildPause(dest: string, onProgress: ProgressFn): Promise<void> {
  const src = join(cacheRoot(), 'src', `pause-${NODE_VERSIONS.pause}`);
  await mkdir(src, { recursive: true });
  await writeFile(join(src, 'go.mod'), 'module kubeloop.local/build/pause\n\ngo 1.22\n');
  await writeFile(join(src, 'main.go'), PAUSE_MAIN);
  await goBuild(src, '.', dest, '-s -w', 'pause', onProgress);
}

async function missingBinaries(paths: NodeBinaries): Promise<(keyof NodeBinaries)[]> {
  const keys = Object.keys(paths) as (keyof NodeBinaries)[];
  const present = await Promise.all(keys.map((k) => executable(paths[k])));
  return keys.filter((_, i) => !present[i]);
}

/** Paths of the real node's binaries, building the missing ones (minutes when cold, with progress lines). */
export async function ensureNodeBinaries(opts: { onProgress?: ProgressFn; kubernetesVersion?: string } = {}): Promise<NodeBinaries> {
  const onProgress = opts.onProgress ?? (() => {});
  const kubernetes = opts.kubernetesVersion ?? kubernetesVersion();
  const paths = nodeBinaryPaths(kubernetes);
  if ((await missingBinaries(paths)).length === 0) return paths;
  const go = await goVersion();
  if (!go) {
    throw new Error(`the real node needs containerd ${NODE_VERSIONS.containerd}, kubelet and kube-proxy ${kubernetes} and CoreDNS ${NODE_VERSIONS.coredns}, built with Go >= 1.26: install Go (https://go.dev/dl/) and put it on PATH`);
  }
  // Its own lock: a control-plane build of another version may run meanwhile, and waiting on it gains nothing.
  return withBuildLock(
    onProgress,
    async () => {
      const missing = await missingBinaries(paths);
      if (missing.length === 0) return paths;
      const started = Date.now();
      onProgress(`building the real node's ${missing.join(', ')} with ${go} (cold: about 10-20 min on 2 cores, cached afterwards)`);
      for (const dir of new Set(missing.map((k) => join(paths[k], '..')))) await mkdir(dir, { recursive: true });
      if (missing.includes('pause')) await buildPause(paths.pause, onProgress);
      if (missing.some((k) => k.startsWith('containerd') || k === 'ctr')) await buildContainerd(paths, onProgress);
      if (missing.includes('kubelet') || missing.includes('kubeProxy')) await buildKubernetesNode(paths, kubernetes, onProgress);
      if (missing.includes('coredns')) await buildCoredns(paths.coredns, onProgress);
      if (missing.includes('kubeRouter')) await buildKubeRouter(paths.kubeRouter, onProgress);
      const still = await missingBinaries(paths);
      if (still.length > 0) throw new Error(`built the real node but still missing: ${still.join(', ')}`);
      onProgress(`real-node binaries ready after ${Math.round((Date.now() - started) / 1000)}s`);
      return paths;
    },
    'node-build.lock',
  );
}
