// npm run bench:watch-wakeups: what one quiet watch's bookmark costs the process that hears it, Node's own floor beside
// kubeloop's informer. A local TLS HTTP/2 server holds BENCH_WATCHES watches and writes a bookmark to one of them
// every 1000/BENCH_RATE ms, so each wakes its reader alone, as the API server's spread bookmarks wake a router at rest.
// Sides, each a client process with its own server process, all at once so load hits all alike:
// - `node:http2`: one session, a 'data' listener parsing each line: the floor any Node client pays per wake-up;
// - `informer`: this tree's lib/kube Informer (list, then watch with bookmarks), one per namespace, as the router's;
// - `baseline`: the same of the checkout BENCH_WATCH_BASELINE names (with its node_modules), for a before/after.
// Each side runs under the router image's node flags and NODE_OPTIONS (the baseline under its checkout's Dockerfile's),
// and reads what its window left in the old generation per bookmark besides its CPU.
// BENCH_CPU_PROF=<dir> writes each side's CPU profile of its measured window there (npm run bench:profile -- <dir>).
import http2 from 'node:http2';
import { fork } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serveBookmarks } from '../test/support/bookmark-server.ts';
import { oldGenerationGrowth } from '../test/support/old-generation.ts';
import { startQuietInformers } from '../test/support/quiet-informers.ts';
import { dockerfileTargets, entrypointNodeFlags } from '../test/support/production-bundle.ts';
import { mean } from './alternating-rounds.ts';
import { machineLoad } from './process-figures.ts';

const WATCHES = Number(process.env.BENCH_WATCHES ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BASELINE = process.env.BENCH_WATCH_BASELINE;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const SELF = fileURLToPath(import.meta.url);

interface Reading {
  side: string;
  bookmarksPerS: number;
  cpuMsPerS: number;
  usPerBookmark: number;
  oldBytesPerBookmark: number;
}

async function serve(certDir: string): Promise<void> {
  const [cert, key] = await Promise.all([readFile(join(certDir, 'tls.crt')), readFile(join(certDir, 'tls.key'))]);
  const server = await serveBookmarks({ cert, key, watches: WATCHES, rate: RATE });
  process.send!({ port: server.port });
}

/** The side's reader of WATCHES watches; returns the number of bookmarks heard so far. */
async function listen(side: string, port: number, certDir: string): Promise<() => number> {
  const ca = await readFile(join(certDir, 'ca.crt'));
  const origin = `https://127.0.0.1:${port}`;
  if (side === 'node:http2') {
    let heard = 0;
    const session = http2.connect(origin, { ca });
    for (let i = 0; i < WATCHES; i++) {
      session.request({ ':path': `/api/v1/namespaces/t-${i}/configmaps?watch=true` }).on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') heard += JSON.parse(line).type === 'BOOKMARK' ? 1 : 0;
      });
    }
    return () => heard;
  }
  const root = side === 'baseline' ? resolve(BASELINE!) : resolve(SELF, '../..');
  const kube = (await import(pathToFileURL(join(root, 'lib/kube/index.ts')).href)) as typeof import('../lib/kube/index.ts');
  return startQuietInformers(kube, origin, ca, WATCHES);
}

/** Profiles the window when BENCH_CPU_PROF asks: starts V8's sampler, and returns what writes its profile. */
async function profileWindow(side: string): Promise<() => Promise<void>> {
  if (!PROFILE_DIR) return async () => {};
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(join(PROFILE_DIR, `${side.replace(/[^a-z0-9]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
  };
}

async function measure(side: string, port: number, certDir: string): Promise<void> {
  const heard = await listen(side, port, certDir);
  await new Promise((done) => setTimeout(done, WARMUP_SECONDS * 1000));
  const oldGrowth = await oldGenerationGrowth();
  const profiled = await profileWindow(side);
  const before = heard();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await new Promise((done) => setTimeout(done, SECONDS * 1000));
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  const bookmarks = heard() - before;
  const oldBytes = oldGrowth();
  await profiled();
  const cpuUs = used.user + used.system;
  const reading: Reading = { side, bookmarksPerS: bookmarks / seconds, cpuMsPerS: cpuUs / 1000 / seconds, usPerBookmark: cpuUs / bookmarks, oldBytesPerBookmark: oldBytes / bookmarks };
  process.send!(reading);
  process.exit(0);
}

/** How the router image starts node: its ENTRYPOINT's flags and its ENV (NODE_OPTIONS), from `root`'s Dockerfile. */
interface NodeLaunch {
  flags: string[];
  env: Record<string, string>;
}

async function routerLaunch(root: string): Promise<NodeLaunch> {
  const router = (await dockerfileTargets(root)).find((target) => target.target === 'router');
  if (!router) throw new Error(`${root}/Dockerfile has no router target`);
  return { flags: entrypointNodeFlags(router), env: router.env };
}

function child(args: string[], launch?: NodeLaunch): ReturnType<typeof fork> {
  return fork(SELF, args, { execArgv: [...(launch?.flags ?? []), '--import', 'tsx'], env: { ...process.env, ...launch?.env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

async function runSide(side: string, certDir: string, launch: NodeLaunch): Promise<Reading> {
  const server = child(['--serve', certDir]);
  try {
    const { port } = await new Promise<{ port: number }>((done) => server.once('message', done));
    const client = child(['--side', side, String(port), certDir], launch);
    return await new Promise<Reading>((done, fail) => {
      client.once('message', (reading) => done(reading as Reading));
      client.once('exit', (code) => fail(new Error(`side ${side} exited (${code}) before its reading`)));
    });
  } finally {
    server.kill();
  }
}

async function main(): Promise<void> {
  const { generateBundle } = await import('../certs/generate.ts');
  const certDir = await mkdtemp(join(tmpdir(), 'kubeloop-watch-wakeups-'));
  try {
    const bundle = await generateBundle({ now: new Date(), identity: { service: 'bench', namespace: 'bench' } });
    await Promise.all([writeFile(join(certDir, 'ca.crt'), bundle.ca.certPem), writeFile(join(certDir, 'tls.crt'), bundle.serving.certPem), writeFile(join(certDir, 'tls.key'), bundle.serving.keyPem)]);
    const sides = ['node:http2', 'informer', ...(BASELINE ? ['baseline'] : [])];
    const ours = await routerLaunch(resolve(SELF, '../..'));
    const launches = new Map<string, NodeLaunch>(sides.map((side) => [side, ours]));
    if (BASELINE) launches.set('baseline', await routerLaunch(resolve(BASELINE)));
    console.log(`${WATCHES} watches, a bookmark every ${(1000 / RATE).toFixed(1)} ms, ${SECONDS} s after ${WARMUP_SECONDS} s, ${ROUNDS} rounds, sides at once; ${machineLoad()}`);
    for (const [side, launch] of launches) console.log(`${side}: node ${[...launch.flags, ...Object.entries(launch.env).map(([name, value]) => `${name}="${value}"`)].join(' ')}`);
    const perSide = new Map<string, Reading[]>(sides.map((side) => [side, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      const readings = await Promise.all(sides.map((side) => runSide(side, certDir, launches.get(side)!)));
      for (const reading of readings) perSide.get(reading.side)!.push(reading);
      console.log(`round ${round}: ${readings.map((r) => `${r.side} ${r.usPerBookmark.toFixed(0)} us and ${r.oldBytesPerBookmark.toFixed(0)} B old/bookmark (${r.bookmarksPerS.toFixed(0)}/s, ${r.cpuMsPerS.toFixed(1)} ms/s)`).join('; ')}`);
    }
    const us = (side: string) => mean(perSide.get(side)!.map((r) => r.usPerBookmark));
    const old = (side: string) => mean(perSide.get(side)!.map((r) => r.oldBytesPerBookmark));
    const floor = us('node:http2');
    const informer = us('informer');
    console.log(`\nCPU per bookmark, mean of ${ROUNDS} rounds: node:http2 ${floor.toFixed(0)} us; informer ${informer.toFixed(0)} us (${(informer / floor).toFixed(2)}x the floor)`);
    console.log(`left in the old generation per bookmark: node:http2 ${old('node:http2').toFixed(0)} B; informer ${old('informer').toFixed(0)} B`);
    if (BASELINE) {
      const baseline = us('baseline');
      console.log(`baseline ${baseline.toFixed(0)} us (${(baseline / floor).toFixed(2)}x the floor), ${old('baseline').toFixed(0)} B old; informer / baseline: CPU ${(informer / baseline).toFixed(2)}x, old generation ${(old('informer') / old('baseline')).toFixed(2)}x; ${machineLoad()}`);
    }
  } finally {
    await rm(certDir, { recursive: true, force: true });
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === '--serve') await serve(args[0]!);
else if (mode === '--side') await measure(args[0]!, Number(args[1]), args[2]!);
else await main();
