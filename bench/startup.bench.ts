// `npm run bench:startup`: how long `node cli/bin.js router|function` takes from spawn to serving, and its idle
// RSS, from dist/cli against the bundled entrypoints (dist/bundle, cli/bundle-entrypoints.js), each with and without
// a warmed V8 compile cache, and the router from its startup snapshot (cli/build-snapshot.js, the router image's);
// interleaved rounds, medians and same-run ratios. Needs `npm run build` first. BENCH_ROUNDS (default 7). No cluster: the router's ops server answers /healthz
// before it reaches the API server (given one that never answers), which is the part module loading delays.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routerSnapshot } from '../cli/router-snapshot.ts';
import { machineLoad, readProcess } from './process-figures.ts';
import { MiB, percentile, ROOT } from './router-bench-kit.ts';
import { startUntilHealthy } from './spawn-until-healthy.ts';
import { stopChild } from './child-lifetime.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

interface Variant {
  name: string;
  env: NodeJS.ProcessEnv;
  /** Instead of cli/bin.js: Node's arguments before the command line (the router's snapshot). */
  entry?: string[];
  /** Only for this entrypoint. */
  only?: string;
}

interface Figures {
  readyMs: number;
  cpuMs: number;
  rssMiB: number;
}

/** Spawns `node cli/bin.js <args>`, waits until /healthz answers, then waits idle and reads RSS. */
async function startOnce(args: string[], port: number, env: NodeJS.ProcessEnv, entry?: string[]): Promise<Figures> {
  const { child, readyMs } = await startUntilHealthy(ROOT, [...args, '--port', String(port)], port, env, [], entry);
  try {
    const { cpuMs } = readProcess(child.pid!);
    // Idle: what it holds once start-up garbage had a chance to go (no forced GC: the process as deployed).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { readyMs, cpuMs, rssMiB: readProcess(child.pid!).rss / MiB };
  } finally {
    await stopChild(child);
  }
}

const median = (values: number[]) => percentile(values, 50);

/** Node's arguments that start the router from the snapshot npm run build made (cli/router-snapshot.ts). */
function snapshotEntry(): string[] {
  const snapshot = routerSnapshot(join(ROOT, 'dist'));
  if (!('nodeArgs' in snapshot)) throw new Error(`the router's snapshot cannot be used: ${snapshot.why}`);
  return snapshot.nodeArgs;
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'bundle', 'router.mjs'))) throw new Error('no dist/bundle: run npm run build first');
  // cli/bin.js would use it for every variant: the variants without a cache must compile.
  if (existsSync(join(ROOT, '.compile-cache'))) throw new Error('remove .compile-cache (cli/warm-compile-cache.js) first: this bench warms its own caches');
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-startup-bench-'));
  // An API server that never answers: the router serves /healthz and keeps waiting for it.
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
  );
  const variants: Variant[] = [
    { name: 'dist', env: { KUBELOOP_NO_BUNDLE: '1' } },
    { name: 'dist + compile cache', env: { KUBELOOP_NO_BUNDLE: '1', NODE_COMPILE_CACHE: join(dir, 'cache-dist') } },
    { name: 'bundle', env: {} },
    { name: 'bundle + compile cache', env: { NODE_COMPILE_CACHE: join(dir, 'cache-bundle') } },
    // The router image's start since #37: the loaded bundle restored from dist/bundle/router.blob.
    { name: 'snapshot', env: {}, entry: snapshotEntry(), only: 'router' },
  ];
  const entrypoints = [
    { name: 'router', args: ['router', '--kubeconfig', kubeconfig, '--api-timeout-seconds', '60', '--host', '127.0.0.1'] },
    { name: 'function pod-name-label', args: ['function', 'pod-name-label', '--host', '127.0.0.1'] },
  ];
  const port = 20_000 + (process.pid % 20_000);
  console.log(`uptime at start: ${machineLoad()}`);
  // One unmeasured start each: fills the compile caches (as the image build does) and the page cache.
  const variantsOf = (entry: { name: string }) => variants.filter((v) => v.only === undefined || v.only === entry.name);
  for (const entry of entrypoints) for (const variant of variantsOf(entry)) await startOnce(entry.args, port, variant.env, variant.entry);
  const results = new Map<string, Figures[]>();
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, the order rotating each round, so load from other work falls on every variant alike.
    for (const entry of entrypoints) {
      const own = variantsOf(entry);
      for (let i = 0; i < own.length; i++) {
        const variant = own[(i + round) % own.length]!;
        const key = `${entry.name}|${variant.name}`;
        results.set(key, [...(results.get(key) ?? []), await startOnce(entry.args, port, variant.env, variant.entry)]);
      }
    }
  }
  console.log(`\n${ROUNDS} rounds, medians; ratio against dist + compile cache (the images today), same run\n`);
  console.log('| entrypoint | variant | spawn to /healthz | CPU to /healthz | idle RSS | time ratio | CPU ratio | RSS ratio |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const entry of entrypoints) {
    const base = results.get(`${entry.name}|dist + compile cache`)!;
    const [bReady, bCpu, bRss] = [median(base.map((f) => f.readyMs)), median(base.map((f) => f.cpuMs)), median(base.map((f) => f.rssMiB))];
    for (const variant of variantsOf(entry)) {
      const figures = results.get(`${entry.name}|${variant.name}`)!;
      const [ready, cpu, rss] = [median(figures.map((f) => f.readyMs)), median(figures.map((f) => f.cpuMs)), median(figures.map((f) => f.rssMiB))];
      console.log(
        `| ${entry.name} | ${variant.name} | ${ready.toFixed(0)} ms | ${cpu.toFixed(0)} ms | ${rss.toFixed(1)} MiB | ${(ready / bReady).toFixed(2)}x | ${(cpu / bCpu).toFixed(2)}x | ${(rss / bRss).toFixed(2)}x |`,
      );
    }
  }
  console.log(`\nuptime at end: ${machineLoad()}`);
  await rm(dir, { recursive: true, force: true });
}

await main();
