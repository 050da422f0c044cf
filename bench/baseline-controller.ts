// The controller-runtime baselines of bench:router and bench:tenants-scale: builds bench/baseline-controller/main.go
// with the machine's go from the Go module proxy into ~/.cache/kubeloop/baseline-controller (keyed by source and
// version, never committed), and runs it; bench/process-figures.ts reads both sides' CPU time and RSS from /proc alike.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { killWithBench, stopChild } from './child-lifetime.ts';

/** The controller-runtime release the baseline is built on (the newest when this was written). */
export const CONTROLLER_RUNTIME_VERSION = 'v0.25.2';
const SOURCE = new URL('./baseline-controller/main.go', import.meta.url);
const CACHE = join(process.env.KUBELOOP_CACHE_DIR ?? join(homedir(), '.cache', 'kubeloop'), 'baseline-controller');

/** Builds the baseline once per source and version; later runs return the cached binary at once. */
export async function buildBaselineController(onProgress: (line: string) => void): Promise<string> {
  const source = await readFile(SOURCE, 'utf8');
  const key = createHash('sha256').update(`${CONTROLLER_RUNTIME_VERSION}\n${source}`).digest('hex').slice(0, 12);
  const binary = join(CACHE, `baseline-controller-${key}`);
  if (await access(binary).then(() => true, () => false)) return binary;
  const src = join(CACHE, `src-${key}`);
  await mkdir(src, { recursive: true });
  await writeFile(join(src, 'main.go'), source);
  await writeFile(join(src, 'go.mod'), `module kubeloop.local/bench/baseline-controller\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime ${CONTROLLER_RUNTIME_VERSION}\n`);
  onProgress(`building the controller-runtime ${CONTROLLER_RUNTIME_VERSION} baseline into ${CACHE} (first run only, a few minutes) ...`);
  // GOWORK=off: a go.work above the cache must not leak in. CGO off: static, no C toolchain needed.
  const env = { ...process.env, CGO_ENABLED: '0', GOWORK: 'off' };
  const go = (args: string[]) => promisify(execFile)('go', args, { cwd: src, env, maxBuffer: 16 * 1024 * 1024 });
  await go(['mod', 'tidy']);
  const tmp = `${binary}.tmp-${process.pid}`;
  await go(['build', '-trimpath', '-ldflags=-s -w', '-o', tmp, '.']);
  await rename(tmp, binary);
  await rm(src, { recursive: true, force: true });
  return binary;
}

export interface BaselineSettings {
  kubeconfigPath: string;
  /** The namespaces watched, a cache each. */
  namespaces: readonly string[];
  qps: number;
  burst: number;
  workers: number;
  /** pods (the default): bench:router's pod-name-label; tenants: bench:tenants-scale's copier, read-only. */
  shape?: 'pods' | 'tenants';
  /** host:port for controller-runtime's /metrics; none when unset. */
  metricsBindAddress?: string;
  /** tenants: create or update the copies (in the router's place) instead of only comparing them. */
  write?: boolean;
  /** tenants: report each reconcile of a ConfigMap holding this annotation (its value: Unix ms). */
  changedAtAnnotation?: string;
}

/** A reconcile of a ConfigMap holding the changed-at annotation: when it started (Unix ms), and what it read. */
export interface MarkedReconcile {
  namespace: string;
  changedAt: number;
  resourceVersion: string;
  receivedAt: number;
}

export interface BaselineChild {
  pid: number;
  /** Resolves once the controller's workers run (its cache has synced). */
  ready: Promise<void>;
  /** Reconciles that returned an error so far (conflicts, retried with backoff). */
  errors(): number;
  /** The tenants shape's reconciles that found a Secret not holding its ConfigMap's data. */
  differs(): number;
  /** The marked reconciles since the last call (changedAtAnnotation). */
  takeMarked(): MarkedReconcile[];
  stop(): Promise<void>;
}

export function spawnBaselineController(binary: string, s: BaselineSettings): BaselineChild {
  const args = [`--kubeconfig=${s.kubeconfigPath}`, `--namespace=${s.namespaces.join(',')}`, `--qps=${s.qps}`, `--burst=${s.burst}`, `--workers=${s.workers}`];
  if (s.shape) args.push(`--shape=${s.shape}`);
  if (s.metricsBindAddress) args.push(`--metrics-bind-address=${s.metricsBindAddress}`);
  if (s.write) args.push('--write');
  if (s.changedAtAnnotation) args.push(`--changed-at-annotation=${s.changedAtAnnotation}`);
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  killWithBench(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let errors = 0;
  let differs = 0;
  let marked: MarkedReconcile[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    // controller-runtime logs "Starting workers" once the informer has synced: the same point as the router's ready.
    const lines = createInterface({ input: child.stderr! });
    lines.on('line', (line) => {
      if (line.includes('Starting workers')) resolve();
      else if (line.includes('"Reconciler error"')) errors += 1;
      else if (line.includes('"copy differs"')) differs += 1;
      else if (line.includes('"marked reconcile"')) marked.push(JSON.parse(line) as MarkedReconcile);
      else if (line.includes('"level":"error"')) process.stderr.write(`[go] ${line}\n`);
    });
    void exited.then(() => reject(new Error('the baseline controller exited before its workers started')));
  });
  return {
    pid: child.pid!,
    ready,
    errors: () => errors,
    differs: () => differs,
    takeMarked: () => {
      const taken = marked;
      marked = [];
      return taken;
    },
    stop: () => stopChild(child),
  };
}
