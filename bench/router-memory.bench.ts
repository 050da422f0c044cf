// npx tsx bench/router-memory.bench.ts: the router's peak RSS and CPU per pod with BENCH_PODS (2000) pods,
// already there and created live (bench:router's uncapped kubeloop side: the image's settings, from the bundle),
// for this tree and, when BENCH_BASELINE_TREE names another checkout (with node_modules), that tree's router,
// on one control plane and one function in one run, the trees' order rotating per round (BENCH_ROUNDS, 2).
// BENCH_VARIANTS="--flag NAME=value;--flag" adds this tree's router with those Node flags (after the image's
// NODE_OPTIONS, so they win) and environment as a side each: heap settings against the image's in the same run.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { compileChildren, MiB, NODES, ROOT, spawnFunction, type ChildCode } from './router-bench-kit.ts';
import { roundOrder } from './alternating-rounds.ts';
import { versusRun } from './router-vs-go.ts';
import type { LimitMode, VersusRun, Work } from './versus-report.ts';

const PODS = Number(process.env.BENCH_PODS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WORKS = (process.env.BENCH_WORK ?? 'existing,live').split(',') as Work[];
const UNCAPPED: LimitMode = { name: 'uncapped', qps: 1000, burst: 2000 };
const commitOf = (root: string) => execFileSync('git', ['-C', root, 'describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();

interface Tree {
  label: string;
  code: ChildCode;
  /** Set in the router child's environment (spawnRouter passes the bench's own). */
  env?: Record<string, string>;
}

const VARIANTS = (process.env.BENCH_VARIANTS ?? '').split(';').map((flags) => flags.trim()).filter(Boolean);

/** A variant's words: NAME=value sets the child's environment (glibc's MALLOC_* say), the rest are Node flags. */
function variantEnv(variant: string): Record<string, string> {
  const env: Record<string, string> = {};
  const flags: string[] = [];
  for (const word of variant.split(' ').filter(Boolean)) {
    const pair = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word);
    if (pair) env[pair[1]!] = pair[2]!;
    else flags.push(word);
  }
  return { ...env, BENCH_ROUTER_FLAGS: flags.join(' ') };
}

/** A tree's children as its own bench kit builds them (its bundle, its sources). */
async function treeCode(root: string): Promise<ChildCode> {
  const kit = (await import(join(root, 'bench/router-bench-kit.ts'))) as { compileChildren: () => Promise<ChildCode> };
  return kit.compileChildren();
}

function line(tree: string, r: VersusRun): string {
  const spaces = r.atPeak ? Object.entries(r.atPeak.spaces).filter(([, b]) => b >= MiB).map(([n, b]) => `${n.replace(/_space$/, '')} ${(b / MiB).toFixed(1)}`).join(', ') : '';
  const external = r.atPeak ? `, external ${(r.atPeak.external / MiB).toFixed(1)}` : '';
  return `  ${tree} ${r.work} ${r.pods}: peak RSS ${(r.peakRss / MiB).toFixed(1)} MiB (${spaces}${external}); router CPU ${(r.cpuMs / r.pods).toFixed(2)} ms/pod, function ${(r.functionCpuMs / r.pods).toFixed(2)}; all labelled ${(r.totalMs / 1000).toFixed(2)} s${r.idleRss > 0 ? `; idle RSS before the pods ${(r.idleRss / MiB).toFixed(1)} MiB` : ''}`;
}

async function main(): Promise<void> {
  const baseline = process.env.BENCH_BASELINE_TREE;
  const [code, baseCode, plane] = await Promise.all([
    compileChildren(),
    baseline ? treeCode(baseline) : Promise.resolve(undefined),
    startControlPlane({ nodes: NODES, onProgress: (l) => process.stderr.write(`[control-plane] ${l}\n`) }),
  ]);
  const trees: Tree[] = [
    { label: `this tree (${commitOf(ROOT)})`, code },
    ...(baseline && baseCode ? [{ label: `baseline (${commitOf(baseline)})`, code: baseCode }] : []),
    ...VARIANTS.map((variant) => ({ label: `this tree + ${variant}`, code, env: variantEnv(variant) })),
  ];
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 } });
  const fn = await spawnFunction(code, 'pod-name-label');
  const results: Array<{ tree: string; run: VersusRun }> = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const order = roundOrder(trees, round - 1);
      for (const work of WORKS) {
        for (const tree of order) {
          const settings = { code: tree.code, client, kubeconfigPath: plane.kubeconfigPath, functionUrl: fn.url, functionPid: fn.child.pid!, goBinary: '', concurrency: 16, annotation: 'kubeloop.dev/add-pod-name-label', label: 'kubeloop.dev/pod-name' };
          Object.assign(process.env, tree.env);
          const run = await versusRun(settings, UNCAPPED, 'kubeloop', work, PODS, `${round}-${trees.indexOf(tree)}`).finally(() => {
            for (const name of Object.keys(tree.env ?? {})) delete process.env[name];
          });
          results.push({ tree: tree.label, run });
          console.error(line(tree.label, run));
        }
      }
    }
  } finally {
    fn.child.kill();
    await client.close();
    await Promise.all(trees.map((t) => t.code.dispose()));
    await plane.stop();
  }
  console.log(`\nrouter memory, ${PODS} pods, uncapped, ${ROUNDS} round(s):`);
  for (const { tree, run } of results) console.log(line(tree, run));
}

await main();
