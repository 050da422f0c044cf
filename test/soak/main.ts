// `npm run soak -- --minutes M --seed S [--dir DIR] [--json FILE]`: a bounded chaos soak on a private
// local control plane; prints the summary and exits 1 on any invariant violation. Ctrl+C stops it
// cleanly (a second Ctrl+C kills everything at once).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSoak } from './run-soak.ts';
import { parseSoakArgs, SOAK_USAGE, type SoakArgs } from './soak-args.ts';
import { exitCodeOf, formatSummary } from './summary.ts';

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(SOAK_USAGE);
    return 0;
  }
  let args: SoakArgs;
  try {
    args = parseSoakArgs(argv);
  } catch (error) {
    console.error(`soak: ${(error as Error).message}\n\n${SOAK_USAGE}`);
    return 2;
  }
  const logDir = args.dir ?? (await mkdtemp(join(tmpdir(), 'kubeloop-soak-')));
  await mkdir(logDir, { recursive: true });
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      // Second signal: no more patience; the supervisor's exit handler kills every child.
      process.exit(130);
    }
    console.error(`soak: ${signal}, stopping everything it started ...`);
    stop.abort();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const say = (line: string): void => void process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  try {
    const summary = await runSoak({ minutes: args.minutes, seed: args.seed, logDir, say, signal: stop.signal, namespacedLoops: args.namespacedLoops });
    if (args.json) await writeFile(args.json, `${JSON.stringify(summary, null, 2)}\n`);
    console.log(formatSummary(summary));
    if (stop.signal.aborted) return 130;
    return exitCodeOf(summary);
  } catch (error) {
    console.error(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return stop.signal.aborted ? 130 : 2;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

process.exitCode = await main(process.argv.slice(2));
