// `npm run bench:function-memory` (issue #37, goal <= 60 MiB): a function as its image runs it (`node cli/bin.js
// function pod-name-label`, the bundle, a warmed compile cache, the image target's ENV from the Dockerfile): start CPU,
// idle RSS, then autocannon POSTs of a recorded pod request: peak RSS (VmHWM), req/s and server CPU per request.
// BENCH_BASELINE_ROOT=<a built checkout> (e.g. a worktree of main after `npm run build`) runs its function beside
// this checkout's in the same run, rounds interleaved; BENCH_VARIANTS="--flag A=b;--other" adds this checkout with
// each of those node flags and KEY=value variables instead of the image's. BENCH_ROUNDS (default 3), BENCH_DURATION_S
// of load (default 5), BENCH_RATE=<req/s> holds every variant to that rate, so CPU per request compares like with like
// (unset: as fast as each answers, and a slower variant's requests each cost more CPU, coalescing less).
// BENCH_SIGNED=1 signs the calls as the chart's functions are (signing.enabled): every variant gets a signing secret.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audienceOf, generateSigningSecret, parseSigningSecrets, signRequest } from '../lib/signing/webhook-signature.ts';
import { dockerfileTargets, entrypointNodeFlags } from '../test/support/production-bundle.ts';
import { autocannonPost } from './autocannon-kit.ts';
import { machineLoad, readProcess } from './process-figures.ts';
import { MiB, percentile, ROOT } from './router-bench-kit.ts';
import { startUntilHealthy } from './spawn-until-healthy.ts';
import { stopChild } from './child-lifetime.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 10;
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const TARGET = 'function-pod-name-label';
const SIGNING_SECRET = process.env.BENCH_SIGNED === '1' ? generateSigningSecret() : undefined;

interface Variant {
  name: string;
  root: string;
  env: NodeJS.ProcessEnv;
  /** What the image's ENTRYPOINT puts between the node binary and cli/bin.js. */
  nodeFlags: string[];
}

interface Figures {
  startCpuMs: number;
  idleMiB: number;
  peakMiB: number;
  afterMiB: number;
  /** Of the RSS after load, the file-backed pages (the node binary's: shared by every process running it). */
  afterFileMiB: number;
  requestsPerSecond: number;
  cpuMicrosPerRequest: number;
}

const request = (JSON.parse(await readFile(join(ROOT, 'test/fixtures/pod-name-label/adds-label-to-annotated-pod.json'), 'utf8')) as { request: { kind: string } }).request;
const body = JSON.stringify(request);
/** One signature per round: valid for the tolerance (5 minutes), and the function keeps no replay cache. */
const signedHeaders = (): Record<string, string> => (SIGNING_SECRET ? { ...signRequest(parseSigningSecrets(SIGNING_SECRET), audienceOf(request), body) } : {});

async function measureOnce(variant: Variant, port: number, measured: boolean): Promise<Figures> {
  const env = SIGNING_SECRET ? { ...variant.env, KUBELOOP_SIGNING_SECRET: SIGNING_SECRET } : variant.env;
  const started = await startUntilHealthy(variant.root, ['function', 'pod-name-label', '--host', '127.0.0.1', '--port', String(port)], port, env, variant.nodeFlags);
  const pid = started.child.pid!;
  try {
    const startCpuMs = readProcess(pid).cpuMs;
    // Idle: what it holds once start-up garbage had a chance to go (no forced GC: the process as deployed).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const idleMiB = readProcess(pid).rss / MiB;
    if (!measured) return { startCpuMs, idleMiB, peakMiB: 0, afterMiB: 0, afterFileMiB: 0, requestsPerSecond: 0, cpuMicrosPerRequest: 0 };
    const before = readProcess(pid).cpuMs;
    const run = await autocannonPost({ url: `http://127.0.0.1:${port}/`, body, headers: signedHeaders(), connections: CONNECTIONS, seconds: DURATION_S, ...(RATE ? { rate: RATE } : {}) });
    const after = readProcess(pid);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const settled = readProcess(pid);
    return {
      startCpuMs,
      idleMiB,
      peakMiB: after.peakRss / MiB,
      afterMiB: settled.rss / MiB,
      afterFileMiB: settled.rssFile / MiB,
      requestsPerSecond: run.requests / DURATION_S,
      cpuMicrosPerRequest: ((after.cpuMs - before) * 1000) / run.requests,
    };
  } finally {
    await stopChild(started.child);
  }
}

async function main(): Promise<void> {
  const imageOf = async (root?: string) => {
    const target = (await dockerfileTargets(root)).find((t) => t.target === TARGET);
    if (!target) throw new Error(`the Dockerfile${root ? ` of ${root}` : ''} has no target ${TARGET}`);
    return { env: target.env, nodeFlags: entrypointNodeFlags(target) };
  };
  const image = await imageOf();
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-function-memory-'));
  const cache = (name: string) => ({ NODE_COMPILE_CACHE: join(dir, name.replace(/\W+/g, '-')) });
  const variants: Variant[] = [];
  const baseline = process.env.BENCH_BASELINE_ROOT;
  if (baseline) {
    const base = await imageOf(baseline);
    variants.push({ name: `baseline ${baseline} ${[...base.nodeFlags, JSON.stringify(base.env)].join(' ')}`, root: baseline, env: { ...base.env, ...cache('baseline') }, nodeFlags: base.nodeFlags });
  }
  variants.push({ name: `this checkout, image ${[...image.nodeFlags, JSON.stringify(image.env)].join(' ')}`, root: ROOT, env: { ...image.env, ...cache('image') }, nodeFlags: image.nodeFlags });
  for (const spec of (process.env.BENCH_VARIANTS ?? '').split(';').filter(Boolean)) {
    const words = spec.trim().split(/\s+/);
    const env = Object.fromEntries(words.filter((w) => !w.startsWith('-')).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
    variants.push({ name: `this checkout, ${spec.trim()}`, root: ROOT, env: { ...env, ...cache(spec) }, nodeFlags: words.filter((w) => w.startsWith('-')) });
  }
  const port = 20_000 + (process.pid % 20_000);
  console.log(`bench:function-memory  ${ROUNDS} rounds, ${DURATION_S} s of ${CONNECTIONS}-connection POSTs (${body.length} bytes) each${RATE ? ` at ${RATE} req/s` : ''}${SIGNING_SECRET ? ', signed' : ''}; uptime at start: ${machineLoad()}`);
  // One unmeasured start each fills its compile cache (as the image build does).
  for (const variant of variants) await measureOnce(variant, port, false);
  const results = new Map<string, Figures[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, the order rotating each round, so load from other work falls on every variant alike.
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + round) % variants.length]!;
      const figures = await measureOnce(variant, port, true);
      results.get(variant.name)!.push(figures);
      // Each round as it comes, so a median's spread shows (a peak moving by ~1 MiB needs it to be believed).
      console.log(`round ${round + 1} ${variant.name}: idle ${figures.idleMiB.toFixed(1)} MiB, peak ${figures.peakMiB.toFixed(1)} MiB, ${figures.requestsPerSecond.toFixed(0)} req/s, ${figures.cpuMicrosPerRequest.toFixed(0)} us/req`);
    }
  }
  const medians = (name: string) => {
    const figures = results.get(name)!;
    const m = (key: keyof Figures) => percentile(figures.map((f) => f[key]), 50);
    return { startCpuMs: m('startCpuMs'), idleMiB: m('idleMiB'), peakMiB: m('peakMiB'), afterMiB: m('afterMiB'), afterFileMiB: m('afterFileMiB'), requestsPerSecond: m('requestsPerSecond'), cpuMicrosPerRequest: m('cpuMicrosPerRequest') };
  };
  const base = medians(variants[0]!.name);
  console.log(`\nmedians; ratios against "${variants[0]!.name}" (same run)\n`);
  console.log('| variant | start CPU | idle RSS | peak RSS under load | RSS after load (file-backed) | req/s | CPU/req | idle / peak ratio | CPU/req ratio |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const variant of variants) {
    const f = medians(variant.name);
    console.log(
      `| ${variant.name} | ${f.startCpuMs.toFixed(0)} ms | ${f.idleMiB.toFixed(1)} MiB | ${f.peakMiB.toFixed(1)} MiB | ${f.afterMiB.toFixed(1)} MiB (${f.afterFileMiB.toFixed(1)}) | ${f.requestsPerSecond.toFixed(0)} | ${f.cpuMicrosPerRequest.toFixed(0)} us | ` +
        `${(f.idleMiB / base.idleMiB).toFixed(2)}x / ${(f.peakMiB / base.peakMiB).toFixed(2)}x | ${(f.cpuMicrosPerRequest / base.cpuMicrosPerRequest).toFixed(2)}x |`,
    );
  }
  console.log(`\nuptime at end: ${machineLoad()}`);
  await rm(dir, { recursive: true, force: true });
}

await main();
