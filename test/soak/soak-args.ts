// The command line of `npm run soak`: --minutes, --seed, --dir, --json, checked with a clear error.
import { parseArgs } from 'node:util';

export const SOAK_USAGE = `usage: npm run soak -- [--minutes 10] [--seed 1] [--dir DIR] [--json FILE] [--namespaced-loops NAMES]

  --minutes M   churn and faults for M minutes (0.5..1440), then a quiet period until convergence
  --seed S      seed of the churn and the fault schedule (an integer); the same seed replays the same plan
  --dir DIR     where the process logs go (default: a new kubeloop-soak-* directory under the temp dir)
  --json FILE   also write the summary as JSON
  --namespaced-loops NAMES  run these sample Loops (comma-separated: pod-name-label, podset, at, watcher) as
                namespaced Loops of the soak namespace, as a team would, instead of ClusterLoops`;

/** The sample Loops (samples/loops) whose kinds are namespaced, so that a namespaced Loop may run them. */
export const NAMESPACED_SAMPLE_LOOPS = ['at', 'pod-name-label', 'podset', 'watcher'] as const;

export interface SoakArgs {
  minutes: number;
  seed: number;
  dir?: string;
  json?: string;
  /** Sample Loops run as namespaced Loops of the soak namespace (empty: all are ClusterLoops, as before). */
  namespacedLoops: string[];
}

export function parseSoakArgs(argv: string[]): SoakArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { minutes: { type: 'string' }, seed: { type: 'string' }, dir: { type: 'string' }, json: { type: 'string' }, 'namespaced-loops': { type: 'string' } },
  });
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const minutes = Number(values.minutes ?? '10');
  if (!Number.isFinite(minutes) || minutes < 0.5 || minutes > 1440) throw new Error(`--minutes: want a number from 0.5 to 1440, got "${values.minutes}"`);
  const seed = Number(values.seed ?? '1');
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed: want a non-negative integer, got "${values.seed}"`);
  const namespacedLoops = (values['namespaced-loops'] ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = namespacedLoops.find((n) => !(NAMESPACED_SAMPLE_LOOPS as readonly string[]).includes(n));
  if (unknown) throw new Error(`--namespaced-loops: "${unknown}" is not a sample Loop; want some of ${NAMESPACED_SAMPLE_LOOPS.join(', ')}`);
  return { minutes, seed, ...(values.dir ? { dir: values.dir } : {}), ...(values.json ? { json: values.json } : {}), namespacedLoops };
}
