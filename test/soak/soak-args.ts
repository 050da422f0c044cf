// The command line of `npm run soak`: --minutes, --seed, --dir, --json, checked with a clear error.
import { parseArgs } from 'node:util';

export const SOAK_USAGE = `usage: npm run soak -- [--minutes 10] [--seed 1] [--dir DIR] [--json FILE]

  --minutes M   churn and faults for M minutes (0.5..1440), then a quiet period until convergence
  --seed S      seed of the churn and the fault schedule (an integer); the same seed replays the same plan
  --dir DIR     where the process logs go (default: a new kubeloop-soak-* directory under the temp dir)
  --json FILE   also write the summary as JSON`;

export interface SoakArgs {
  minutes: number;
  seed: number;
  dir?: string;
  json?: string;
}

export function parseSoakArgs(argv: string[]): SoakArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { minutes: { type: 'string' }, seed: { type: 'string' }, dir: { type: 'string' }, json: { type: 'string' } },
  });
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const minutes = Number(values.minutes ?? '10');
  if (!Number.isFinite(minutes) || minutes < 0.5 || minutes > 1440) throw new Error(`--minutes: want a number from 0.5 to 1440, got "${values.minutes}"`);
  const seed = Number(values.seed ?? '1');
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed: want a non-negative integer, got "${values.seed}"`);
  return { minutes, seed, ...(values.dir ? { dir: values.dir } : {}), ...(values.json ? { json: values.json } : {}) };
}
