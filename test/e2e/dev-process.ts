// Runs `kubeloop dev` as a user does, for the dev e2e suites: spawned from cli/bin.js, its output collected,
// resolved once it reports it is running (with the kubeconfig it printed), and stopped with Ctrl+C.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '../cluster/eventually.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';

export interface DevProcess {
  child: ChildProcess;
  /** The exit code, or the signal that ended it. */
  exited: Promise<number | string>;
  kubeconfig: string;
}

export async function startDev(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; onOutput(text: string): void }): Promise<DevProcess> {
  let output = '';
  const child = spawn(process.execPath, [join(REPO_ROOT, 'cli', 'bin.js'), 'dev', ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    options.onOutput(chunk.toString());
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  await eventually('kubeloop dev to report it is running', async () => {
    if (child.exitCode !== null) throw new Error(`kubeloop dev exited with ${child.exitCode}:\n${output}`);
    // dev writes its "running" block line by line; wait for the whole block (it ends with the "Try:" commands,
    // each indented, then an empty line), not just its first lines, or a reader can see it cut short.
    return output.includes('kubeloop dev is running') && /^kubeconfig: (\S+)$/m.test(output) && /^Try:\n(?: {2}.*\n)+\n/m.test(output);
  }, 240_000).catch((error: unknown) => {
    // What dev said so far names the step it waits on (its log folder holds each process's own log).
    throw new Error(`${(error as Error).message}; kubeloop dev said:\n${output.slice(-4000)}`, { cause: error });
  });
  return { child, exited, kubeconfig: /^kubeconfig: (\S+)$/m.exec(output)?.[1] ?? '' };
}

/** Ctrl+C unless it already ended, and waits for the exit. */
export async function stopDev(dev: DevProcess | undefined): Promise<void> {
  if (dev && dev.child.exitCode === null && dev.child.signalCode === null) {
    dev.child.kill('SIGINT');
    await dev.exited;
  }
}
