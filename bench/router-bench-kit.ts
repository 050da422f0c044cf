// Helpers of bench/router.bench.ts: child processes (router, function), namespaces, bounded-pool pod
// creation, a pod watch that timestamps first sightings, and percentiles.
import { createLoopServiceAccount } from '../test/support/loop-service-account.ts';
import { dockerfileTargets, entrypointNodeFlags } from '../test/support/production-bundle.ts';
import { build } from 'esbuild';
import { productionBundleOptions, productionPlugins } from '../cli/bundle-options.js';
import { snapshotBundleOptions } from '../cli/snapshot-bundle.js';
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from '../lib/kube/kube-client.ts';
import { kubeconfigDocument } from '../lib/kube/kube-config.ts';
import { readWatchEvents } from '../lib/kube/watch-stream.ts';
import { killWithBench, stopChild } from './child-lifetime.ts';
import type { FloorConfig } from './node-floor-controller.ts';
import type { RouterChildConfig, RouterChildStats } from './router-bench-router.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** BENCH_CPU_PROF=<dir>: router and function children write V8 CPU profiles there (node --cpu-prof). */
const PROFILE = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
/** BENCH_ROUTER_FLAGS="--flag ...": extra Node flags for the router child (experiments with V8's heap, say); read at each spawn. */
const routerFlags = () => (process.env.BENCH_ROUTER_FLAGS ?? '').split(' ').filter(Boolean);
export const MiB = 1024 * 1024;
/** kwok nodes of the bench's control plane; pods created here are spread over them. */
export const NODES = 4;

/** How child processes run the router and the function: compiled JavaScript as in the images, or the sources via tsx. */
export interface ChildCode {
  /** Node arguments before the script, and the script for a bench/ entry point named without extension. */
  command(entry: ChildEntry): { execArgv: string[]; script: string; env: NodeJS.ProcessEnv };
  dispose(): Promise<void>;
}

const CHILD_ENTRIES = ['router-bench-router', 'function-bench-server', 'node-floor-controller'] as const;
type ChildEntry = (typeof CHILD_ENTRIES)[number];

/**
 * Fills a V8 compile cache for the children as cli/warm-compile-cache.js does for the images: loads what the
 * entry points import (and every function, which the registry loads on demand) without running them.
 */
async function warmCompileCache(dist: string, cacheDir: string, entries: readonly ChildEntry[]): Promise<void> {
  const imports = new Set<string>();
  for (const entry of entries) {
    const source = await readFile(join(dist, 'bench', `${entry}.js`), 'utf8');
    for (const [, specifier] of source.matchAll(/^import .* from ['"]([^'"]+)['"];$/gm)) {
      imports.add(specifier!.startsWith('.') ? pathToFileURL(join(dist, 'bench', specifier!)).href : specifier!);
    }
  }
  // As in the images: client-node is loaded only for some kubeconfigs, and is cached all the same.
  imports.add('@kubernetes/client-node');
  for (const folder of await readdir(join(dist, 'functions'), { withFileTypes: true })) {
    if (folder.isDirectory()) imports.add(pathToFileURL(join(dist, 'functions', folder.name, 'index.js')).href);
  }
  const script = [...imports].map((url) => `await import(${JSON.stringify(url)});`).join('\n');
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: dist, env: { ...process.env, NODE_COMPILE_CACHE: cacheDir } });
}

/**
 * How the children run: `bundle` (the default) as the images run: esbuild bundles of the entry points with
 * the production bundle's settings (cli/bundle-options.js) and a compile cache warmed by a first start, the router
 * from a V8 startup snapshot of its bundle (cli/snapshot-bundle.js) where the tree has one; `dist`
 * compiled by tsc into one file per module (BENCH_CPU_PROF picks it: profiles then name kubeloop's folders);
 * `source` through tsx (BENCH_FROM_SOURCE=1). tsx in the process would add its own memory to every RSS figure.
 */
export type ChildCodeMode = 'bundle' | 'dist' | 'source';

export function childCodeMode(): ChildCodeMode {
  if (process.env.BENCH_FROM_SOURCE === '1') return 'source';
  return process.env.BENCH_CHILD_CODE === 'dist' || (process.env.BENCH_CPU_PROF && process.env.BENCH_CHILD_CODE !== 'bundle') ? 'dist' : 'bundle';
}

/** `root`: the checkout whose router and function are built (another one for a baseline; it needs node_modules). */
export async function compileChildren(mode: ChildCodeMode = childCodeMode(), root = ROOT): Promise<ChildCode> {
  if (mode === 'source') {
    return { command: (entry) => ({ execArgv: ['--import', 'tsx'], script: join(root, `bench/${entry}.ts`), env: {} }), dispose: async () => {} };
  }
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-router-bench-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const cacheDir = join(dir, 'compile-cache');
  // An older tree (BENCH_BASELINE_TREE) may lack an entry added since: the Node floor is always this tree's.
  const entries = CHILD_ENTRIES.filter((entry) => existsSync(join(root, 'bench', `${entry}.ts`)));
  // What the images set, read from `root`'s own Dockerfile (a baseline tree runs with the settings it had): a warmed
  // compile cache, each image's own environment (NODE_OPTIONS) and the node flags its ENTRYPOINT puts before
  // cli/bin.js or the router's snapshot.
  const targets = await dockerfileTargets(root);
  const targetOf = (entry: ChildEntry) => targets.find((t) => t.target === (entry === 'function-bench-server' ? 'function-pod-name-label' : 'router'));
  const imageEnv = (entry: ChildEntry): NodeJS.ProcessEnv => ({ ...targetOf(entry)?.env, NODE_COMPILE_CACHE: cacheDir });
  const imageFlags = (entry: ChildEntry): string[] => {
    const target = targetOf(entry);
    return target ? entrypointNodeFlags(target) : [];
  };
  let script: (entry: ChildEntry) => string;
  let routerBlob: string | undefined;
  if (mode === 'bundle') {
    await build({
      ...productionBundleOptions(join(dir, 'bundle')),
      entryPoints: entries.map((entry) => ({ in: join(root, 'bench', `${entry}.ts`), out: entry })),
      plugins: productionPlugins,
    });
    script = (entry) => join(dir, 'bundle', `${entry}.mjs`);
    await warmBundles(script, imageEnv, imageFlags, entries);
    // As the router image runs it: from a V8 startup snapshot, in a tree whose image has one (BENCH_ROUTER_SNAPSHOT=0: not).
    if (existsSync(join(root, 'cli', 'snapshot-bundle.js')) && process.env.BENCH_ROUTER_SNAPSHOT !== '0') routerBlob = await buildRouterSnapshot(root, dir);
  } else {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'bench/router-bench.tsconfig.json'), '--outDir', join(dir, 'dist')], { cwd: root });
    await warmCompileCache(join(dir, 'dist'), cacheDir, entries);
    script = (entry) => join(dir, 'dist', 'bench', `${entry}.js`);
  }
  return {
    // fork() needs a script: the snapshot takes the word after its flags as its first argument, as the image's `router`.
    command: (entry) =>
      entry === 'router-bench-router' && routerBlob
        ? { execArgv: [...imageFlags(entry), '--snapshot-blob', routerBlob], script: 'router', env: imageEnv(entry) }
        : { execArgv: imageFlags(entry), script: script(entry), env: imageEnv(entry) },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The router child's snapshot, made as cli/build-snapshot.js makes the image's: one CommonJS script, then the blob. */
async function buildRouterSnapshot(root: string, dir: string): Promise<string> {
  const script = join(dir, 'snapshot', 'router-bench-router.cjs');
  // Imported by a stdin entry without exports: a snapshot's script has no `module` to export through.
  const entry = { contents: `import ${JSON.stringify(join(root, 'bench', 'router-bench-router.ts'))};`, resolveDir: root, loader: 'ts' as const };
  await build({ stdin: entry, ...snapshotBundleOptions(script) });
  const blob = join(dir, 'snapshot', 'router-bench-router.blob');
  await promisify(execFile)(process.execPath, await treeSnapshotArgs(root, script, blob));
  return blob;
}

/**
 * The node arguments `root`'s own cli/build-snapshot.js makes its blob with, so a baseline tree's router starts
 * from a snapshot built as that tree's image builds it (before snapshotBuildArgs: with code cache).
 */
async function treeSnapshotArgs(root: string, script: string, blob: string): Promise<string[]> {
  const builder = join(root, 'cli', 'build-snapshot.js');
  // Importing an older build-snapshot.js would run its build: only one that exports snapshotBuildArgs is imported.
  if (!(await readFile(builder, 'utf8')).includes('export function snapshotBuildArgs(')) return ['--snapshot-blob', blob, '--build-snapshot', script];
  const { snapshotBuildArgs } = (await import(pathToFileURL(builder).href)) as typeof import('../cli/build-snapshot.js');
  return snapshotBuildArgs(script, blob);
}

/**
 * Fills the compile cache of the bundled children by starting each once: the router with a kubeconfig that does
 * not exist (it loads every module, then fails), the function until it serves, the Node floor without its
 * configuration (it loads, then exits). Node writes the cache on exit.
 */
async function warmBundles(script: (entry: ChildEntry) => string, env: (entry: ChildEntry) => NodeJS.ProcessEnv, flags: (entry: ChildEntry) => string[], entries: readonly ChildEntry[]): Promise<void> {
  const router = 'router-bench-router';
  await promisify(execFile)(process.execPath, [...flags(router), script(router)], {
    env: { ...process.env, ...env(router), KUBELOOP_BENCH_ROUTER: JSON.stringify({ kubeconfigPath: join(tmpdir(), 'kubeloop-bench-no-kubeconfig'), loops: [], invoke: 'http' }) },
  }).catch(() => {});
  // The Node floor only loads without its configuration.
  if (entries.includes('node-floor-controller')) await promisify(execFile)(process.execPath, [...flags('node-floor-controller'), script('node-floor-controller')], { env: { ...process.env, ...env('node-floor-controller') } });
  const fn = spawn(process.execPath, [...flags('function-bench-server'), script('function-bench-server'), 'function', 'pod-name-label'], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env('function-bench-server') } });
  for await (const line of createInterface({ input: fn.stdout! })) {
    if (line.startsWith('{"url"')) break;
  }
  const exited = new Promise((resolve) => fn.once('exit', resolve));
  fn.kill('SIGTERM');
  await exited;
}

/** Serves a registered function in a child process (bench/function-bench-server.ts); resolves with its URL. */
export async function spawnFunction(code: ChildCode, name: string): Promise<{ url: string; child: ChildProcess }> {
  const { execArgv, script, env } = code.command('function-bench-server');
  const child = spawn(process.execPath, [...PROFILE, ...execArgv, script, 'function', name], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  // A bench killed midway must not leave the function serving.
  killWithBench(child, 'SIGTERM');
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('{"url"')) {
      child.stdout!.resume();
      return { url: (JSON.parse(line) as { url: string }).url, child };
    }
  }
  throw new Error(`function ${name} exited before it served`);
}

export interface FloorChild {
  pid: number;
  /** PATCHes the API server refused so far (each is tried again). */
  errors(): number;
  stop(): Promise<void>;
}

/** Starts the Node floor (bench/node-floor-controller.ts) as the router runs; resolves once it listed and watches. */
export async function spawnNodeFloor(code: ChildCode, config: FloorConfig): Promise<FloorChild> {
  const { execArgv, script, env } = code.command('node-floor-controller');
  const child = spawn(process.execPath, [...PROFILE, ...execArgv, script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: ROOT,
    env: { ...process.env, ...env, KUBELOOP_BENCH_FLOOR: JSON.stringify(config) },
  });
  killWithBench(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let errors = 0;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (line.startsWith('{"patchFailed"')) errors += 1;
    process.stderr.write(`[node floor] ${line}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', () => resolve());
    void exited.then(() => reject(new Error('the Node floor exited before it listed the pods')));
  });
  return {
    pid: child.pid!,
    errors: () => errors,
    stop: () => stopChild(child),
  };
}

export interface RouterChild {
  pid: number;
  stats(gc?: boolean): Promise<RouterChildStats>;
  stop(): Promise<void>;
}

/** Starts bench/router-bench-router.ts with --expose-gc; resolves once its Loops run with complete caches. */
/** A kubeconfig's JSON copy by the path of the YAML one, written once per file. */
const jsonKubeconfigs = new Map<string, Promise<string>>();

/**
 * The router child's kubeconfig as JSON, beside the file: the image in a cluster reads its ServiceAccount and never
 * loads yaml, and kube-config.ts reads a JSON kubeconfig without it, so the bench's start does not pay for yaml either.
 */
function jsonKubeconfig(path: string): Promise<string> {
  if (!existsSync(path)) return Promise.resolve(path);
  let json = jsonKubeconfigs.get(path);
  if (!json) {
    json = readFile(path, 'utf8')
      .then(kubeconfigDocument)
      .then(async (document) => {
        await writeFile(`${path}.json`, JSON.stringify(document));
        return `${path}.json`;
      });
    jsonKubeconfigs.set(path, json);
  }
  return json;
}

export async function spawnRouter(code: ChildCode, config: RouterChildConfig): Promise<RouterChild> {
  const { execArgv, script, env } = code.command('router-bench-router');
  const childConfig: RouterChildConfig = { ...config, kubeconfigPath: await jsonKubeconfig(config.kubeconfigPath) };
  const child = fork(script, [], {
    execArgv: [...PROFILE, ...execArgv, '--expose-gc', ...routerFlags()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    cwd: ROOT,
    env: { ...process.env, ...env, KUBELOOP_BENCH_ROUTER: JSON.stringify(childConfig) },
  });
  let nextId = 0;
  const waiting = new Map<number, (stats: RouterChildStats) => void>();
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`router child exited with ${code} before its Loops synced`)));
    child.on('message', (message: { type: string; id?: number; stats?: RouterChildStats }) => {
      if (message.type === 'ready') resolve();
      if (message.type === 'stats' && message.id !== undefined) waiting.get(message.id)?.(message.stats!);
    });
  });
  return {
    pid: child.pid!,
    stats: (gc = false) =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, (stats) => {
          waiting.delete(id);
          resolve(stats);
        });
        child.send({ type: 'stats', id, gc });
      }),
    stop: () => stopChild(child, () => child.send({ type: 'stop' })),
  };
}

/** Settles, then the lower of two readings after a forced GC (a late allocation can land in one). */
export async function settledStats(router: RouterChild): Promise<RouterChildStats> {
  await new Promise((r) => setTimeout(r, 1000));
  const first = await router.stats(true);
  await new Promise((r) => setTimeout(r, 1000));
  const second = await router.stats(true);
  return first.rss <= second.rss ? first : second;
}

export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | false | undefined>, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Creates a namespace and waits for its default ServiceAccount (pods are refused until it exists). */
/** A namespace with the ServiceAccount the bench's Loops run as (all rights there, none elsewhere). */
export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  await createLoopServiceAccount(client, { namespace: name });
  await until(`ServiceAccount default in ${name}`, 60_000, async () =>
    client.request({ path: `/api/v1/namespaces/${name}/serviceaccounts/default` }).then(
      () => true,
      (error: unknown) => (isApiError(error, 404) ? false : Promise.reject(error)),
    ),
  );
}

/** Deletes every pod of a namespace at once (grace 0) and waits until none is left. */
export async function deleteAllPods(client: KubeClient, namespace: string): Promise<void> {
  // Deleting thousands of pods in one call can take longer than an ordinary request's 30 s on a busy machine.
  // The API server may answer 504 and go on deleting, or have the stream reset (NGHTTP2_INTERNAL_ERROR) and stop:
  // the wait below decides whether the pods are gone, and sends the deletion again whenever the last one ended
  // with pods left.
  let deleting: Promise<void> | undefined;
  const deleteRest = () =>
    (deleting ??= client
      .request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}/pods`, query: { gracePeriodSeconds: 0 }, timeoutMs: 300_000 })
      .then(
        () => undefined,
        (error: unknown) => console.error(`  deleting the pods of ${namespace}: ${(error as Error).message}; waiting for them to go`),
      )
      .finally(() => (deleting = undefined)));
  void deleteRest();
  await until(`pods of ${namespace} deleted`, 300_000, async () => {
    const list = await client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${namespace}/pods`, query: { limit: 1 } });
    if (list.items.length > 0) void deleteRest();
    return list.items.length === 0;
  }, 500);
  // The last deletion may still be answering once the list is empty: left in flight, the client's close cuts it short.
  await deleting;
}

/** Runs `task(i)` for i in [from, to) with at most `concurrency` at a time. */
export async function pool(from: number, to: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, to - from) }, worker));
}

/** A pod like a Deployment's: labels, one container with ports, env, resources and a probe. */
function benchPod(i: number, annotations?: Record<string, string>): object {
  return {
    metadata: { name: `rss-${i}`, labels: { app: 'rss', 'pod-template-hash': '5d8f7c9b6d', tier: 'backend' }, ...(annotations ? { annotations } : {}) },
    spec: {
      nodeName: `kwok-node-${i % NODES}`,
      containers: [
        {
          name: 'app',
          image: 'registry.example/team/app:1.2.3',
          ports: [{ name: 'http', containerPort: 8080 }],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
          readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 10 },
        },
      ],
    },
  };
}

export async function createPods(client: KubeClient, namespace: string, from: number, to: number, annotations?: Record<string, string>): Promise<void> {
  const t0 = performance.now();
  await pool(from, to, 32, async (i) => {
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/pods`, body: benchPod(i, annotations) });
  });
  // kwok marks them Running (status written): full objects then look like a real cluster's.
  await until(`kwok running ${to} pods`, 600_000, async () => {
    const left = await client.request<{ items: unknown[] }>({
      path: `/api/v1/namespaces/${namespace}/pods`,
      query: { fieldSelector: 'status.phase!=Running', limit: 1 },
    });
    return left.items.length === 0;
  }, 1000);
  console.error(`  created pods ${from}..${to - 1} and saw them Running in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** A ReplicaSet of `replicas` pods with these annotations: pods created live, at the controller-manager's pace. */
export async function createReplicaSet(client: KubeClient, namespace: string, replicas: number, annotations: Record<string, string>): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/apis/apps/v1/namespaces/${namespace}/replicasets`,
    body: {
      metadata: { name: 'bench' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'bench' } },
        template: { metadata: { labels: { app: 'bench' }, annotations }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } },
      },
    },
  });
}

export interface Sightings {
  /** Local time (performance.now) each pod was first seen, by name. */
  added: Map<string, number>;
  /** Local time each pod was first seen carrying the label, by name. */
  labelled: Map<string, number>;
  /** Local time each pod was first seen Running (kwok's status write), by name: context for the label's latency. */
  running: Map<string, number>;
  /** Watch events seen per pod before its label, by name: how often the pod changed under the router. */
  changesBeforeLabel: Map<string, number>;
  stop(): void;
}

/**
 * Watches a namespace's pods from its current resourceVersion and timestamps first sightings; resolves
 * once the watch is open, so anything created afterwards is seen.
 */
export async function watchPods(client: KubeClient, namespace: string, label: string): Promise<Sightings> {
  const abort = new AbortController();
  const sightings: Sightings = { added: new Map(), labelled: new Map(), running: new Map(), changesBeforeLabel: new Map(), stop: () => abort.abort() };
  const see = (pod: V1Pod, type: string) => {
    const now = performance.now();
    const name = pod.metadata?.name;
    if (!name || (type !== 'ADDED' && type !== 'MODIFIED')) return;
    if (!sightings.added.has(name)) sightings.added.set(name, now);
    if (pod.status?.phase === 'Running' && !sightings.running.has(name)) sightings.running.set(name, now);
    if (sightings.labelled.has(name)) return;
    if (pod.metadata?.labels?.[label] !== undefined) sightings.labelled.set(name, now);
    else sightings.changesBeforeLabel.set(name, (sightings.changesBeforeLabel.get(name) ?? 0) + 1);
  };
  // A watch the API server ends (a busy one ends some at once) is listed and started again: the bench must
  // never wait for pods it already missed. What a re-list shows is seen late, never lost.
  const list = async (seeItems: boolean) => {
    const listed = await client.request<{ metadata: { resourceVersion: string }; items: V1Pod[] }>({ path: `/api/v1/namespaces/${namespace}/pods` });
    if (seeItems) for (const pod of listed.items) see(pod, 'MODIFIED');
    return listed.metadata.resourceVersion;
  };
  let resourceVersion = await list(false);
  void (async () => {
    while (!abort.signal.aborted) {
      try {
        const body = await client.stream({
          path: `/api/v1/namespaces/${namespace}/pods`,
          query: { watch: true, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3600 },
          signal: abort.signal,
        });
        for await (const event of readWatchEvents<V1Pod>(body)) {
          if (event.object.metadata?.resourceVersion) resourceVersion = event.object.metadata.resourceVersion;
          see(event.object, event.type);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        console.error(`pod watch of ${namespace} failed: ${(error as Error).message}; listing again`);
      }
      if (abort.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 200));
      resourceVersion = await list(true).catch(() => resourceVersion);
    }
  })();
  return sightings;
}

export function percentile(values: number[], p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
