// Builds the pinned control-plane binaries from the Go module proxy into the version-keyed cache.
// Kubernetes and etcd go through generated wrapper modules (their own go.mod replaces staging paths).
import { spawn } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { componentBinDir, componentSrcDir, componentVersion, VERSIONS, type Component } from './versions.ts';

export type ProgressFn = (line: string) => void;

interface GoRun {
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  /** Label in progress lines, e.g. "kube-apiserver v1.35.8". */
  label: string;
  /** Packages in the build graph, when known, to show "n of total". */
  totalPackages?: number;
  onProgress: ProgressFn;
}

const PROGRESS_EVERY_MS = 15_000;

/** The `go version` line, or undefined when no Go toolchain is on PATH. */
export async function goVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await runGo({ args: ['version'], cwd: process.cwd(), label: 'go version', onProgress: () => {} });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** Runs one go command; with `-v` builds, reports how many packages were compiled and the elapsed time. */
export function runGo(run: GoRun): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('go', run.args, {
      cwd: run.cwd,
      // GOWORK=off: a go.work above the cache must not leak in. CGO off: static, no C toolchain needed.
      env: { ...process.env, CGO_ENABLED: '0', GOWORK: 'off', ...run.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let packages = 0;
    const tail: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        packages += 1;
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    });
    const timer = setInterval(() => {
      const secs = Math.round((Date.now() - started) / 1000);
      const of = run.totalPackages ? ` of at most ${run.totalPackages}` : '';
      run.onProgress(`  ${run.label}: ${secs}s elapsed, ${packages}${of} packages compiled`);
    }, PROGRESS_EVERY_MS);
    child.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearInterval(timer);
      if (code === 0) resolve({ stdout });
      else reject(new Error(`go ${run.args.slice(0, 2).join(' ')} for ${run.label} failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
}

export function versionLdflags(v: string): string {
  const [major, minor] = v.replace(/^v/, '').split('.');
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  // Without these /version reports v0.0.0 and Helm's kubeVersion checks and kubectl's skew warning misfire.
  const pkgs = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'];
  const sets = pkgs.flatMap((p) => [
    `-X ${p}.gitVersion=${v}`,
    `-X ${p}.gitMajor=${major}`,
    `-X ${p}.gitMinor=${minor}`,
    `-X ${p}.gitTreeState=clean`,
    `-X ${p}.buildDate=${date}`,
  ]);
  return ['-s', '-w', ...sets].join(' ');
}

async function goModJson(module: string, cwd: string, onProgress: ProgressFn): Promise<{ GoMod: string }> {
  const { stdout } = await runGo({ args: ['mod', 'download', '-json', module], cwd, label: module, onProgress });
  return JSON.parse(stdout) as { GoMod: string };
}

/**
 * Writes the wrapper module: requires k8s.io/kubernetes and pins every staging module to its published v0.X.Y.
 * `commands` are the cmd/ packages it builds (the control plane's, or the real node's kubelet and kube-proxy).
 */
export async function writeKubernetesWrapper(dir: string, version: string, onProgress: ProgressFn, commands: readonly string[] = KUBERNETES_COMMANDS): Promise<void> {
  const stagingVersion = version.replace(/^v1\./, 'v0.');
  const { GoMod } = await goModJson(`k8s.io/kubernetes@${version}`, dir, onProgress);
  const upstream = await readFile(GoMod, 'utf8');
  const staging = [...upstream.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s*=>\s*\.\/staging\//gm)].map((m) => m[1] as string);
  if (staging.length === 0) throw new Error(`no staging replaces found in ${GoMod}`);
  const goLine = /^go \S+$/m.exec(upstream)?.[0] ?? 'go 1.25.0';
  const godebug = /^godebug .+$/m.exec(upstream)?.[0] ?? '';
  const replaces = staging.map((m) => `\t${m} => ${m} ${stagingVersion}`).join('\n');
  await writeFile(
    join(dir, 'go.mod'),
    `module kubeloop.local/build/kubernetes\n\n${goLine}\n\n${godebug}\n\nrequire k8s.io/kubernetes ${version}\n\nreplace (\n${replaces}\n)\n`,
  );
  await writeTools(dir, commands.map((c) => `k8s.io/kubernetes/cmd/${c}`));
}

async function writeEtcdWrapper(dir: string): Promise<void> {
  // etcd's own go.mod replaces its sibling modules with ../ paths, so `go install` of it fails; as a
  // dependency of a wrapper those replaces are ignored and its published siblings are used.
  await writeFile(join(dir, 'go.mod'), `module kubeloop.local/build/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 ${VERSIONS.etcd}\n`);
  await writeTools(dir, ['go.etcd.io/etcd/server/v3']);
}

export async function writeTools(dir: string, packages: string[]): Promise<void> {
  const imports = packages.map((p) => `\t_ "${p}"`).join('\n');
  await writeFile(join(dir, 'tools.go'), `//go:build tools\n\npackage tools\n\nimport (\n${imports}\n)\n`);
}

const KUBERNETES_COMMANDS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'] as const;

/** go build one main package into dest (written to a temp name first so a half-built file never counts). */
export async function goBuild(cwd: string, pkg: string, dest: string, ldflags: string, label: string, onProgress: ProgressFn, tags: readonly string[] = []): Promise<void> {
  const tmp = `${dest}.tmp-${process.pid}`;
  const started = Date.now();
  // go build -v names each package it compiles (cached ones are skipped), so the graph size is an upper bound.
  const tagArgs = tags.length > 0 ? [`-tags=${tags.join(',')}`] : [];
  const deps = await runGo({ args: ['list', '-deps', ...tagArgs, pkg], cwd, label: `go list ${label}`, onProgress });
  const totalPackages = deps.stdout.split('\n').filter(Boolean).length;
  onProgress(`building ${label} (${totalPackages} packages in its build graph) ...`);
  await runGo({ args: ['build', '-v', '-trimpath', ...tagArgs, `-ldflags=${ldflags}`, '-o', tmp, pkg], cwd, label, onProgress, totalPackages });
  await rename(tmp, dest);
  onProgress(`built ${label} in ${Math.round((Date.now() - started) / 1000)}s`);
}

/** go install pkg@version (modules without replace directives) into dest. */
async function goInstall(pkgAtVersion: string, dest: string, ldflags: string, label: string, onProgress: ProgressFn): Promise<void> {
  const gobin = `${dest}.gobin-${process.pid}`;
  await mkdir(gobin, { recursive: true });
  const started = Date.now();
  onProgress(`building ${label} ...`);
  try {
    await runGo({ args: ['install', '-v', '-trimpath', `-ldflags=${ldflags}`, pkgAtVersion], cwd: gobin, env: { GOBIN: gobin }, label, onProgress });
    const name = pkgAtVersion.replace(/@.*$/, '').split('/').pop() as string;
    await rename(join(gobin, name), dest);
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
  onProgress(`built ${label} in ${Math.round((Date.now() - started) / 1000)}s`);
}

/** Builds every binary of one component into its cache directory. Files already present are kept. */
export async function buildComponent(component: Component, missing: readonly string[], onProgress: ProgressFn, kubernetes?: string): Promise<void> {
  const binDir = componentBinDir(component, kubernetes);
  await mkdir(binDir, { recursive: true });
  const version = componentVersion(component, kubernetes);
  if (component === 'kubernetes') {
    const src = componentSrcDir(component, kubernetes);
    await mkdir(src, { recursive: true });
    onProgress(`preparing Go wrapper module for Kubernetes ${version} in ${src}`);
    await writeKubernetesWrapper(src, version, onProgress);
    await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (kubernetes)', onProgress });
    const ldflags = versionLdflags(version);
    for (const cmd of KUBERNETES_COMMANDS) {
      if (!missing.includes(cmd)) continue;
      await goBuild(src, `k8s.io/kubernetes/cmd/${cmd}`, join(binDir, cmd), ldflags, `${cmd} ${version}`, onProgress);
    }
  } else if (component === 'etcd') {
    const src = componentSrcDir(component);
    await mkdir(src, { recursive: true });
    await writeEtcdWrapper(src);
    await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (etcd)', onProgress });
    await goBuild(src, 'go.etcd.io/etcd/server/v3', join(binDir, 'etcd'), '-s -w', `etcd ${version}`, onProgress);
  } else if (component === 'kwok') {
    const ldflags = `-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${version.replace(/^v/, '')}`;
    await goInstall(`sigs.k8s.io/kwok/cmd/kwok@${version}`, join(binDir, 'kwok'), ldflags, `kwok ${version}`, onProgress);
  } else {
    const [major, minor] = VERSIONS.kubernetes.replace(/^v/, '').split('.');
    // Without the chartutil defaults `helm template` assumes Kubernetes 1.20; match the local API server.
    const ldflags = [
      '-s -w',
      `-X helm.sh/helm/v3/internal/version.version=${version}`,
      `-X helm.sh/helm/v3/internal/version.gitTreeState=clean`,
      `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=${major}`,
      `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${minor}`,
      `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=${major}`,
      `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${minor}`,
    ].join(' ');
    await goInstall(`helm.sh/helm/v3/cmd/helm@${version}`, join(binDir, 'helm'), ldflags, `helm ${version}`, onProgress);
  }
}
