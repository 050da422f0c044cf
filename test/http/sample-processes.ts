// Runs the non-TypeScript samples (samples/python, samples/go) as real processes on 127.0.0.1 for tests:
// builds the Go one into the kubeloop cache outside the repository, starts either, and stops it by pid.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot } from '../../cli/cluster/versions.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const PYTHON_POD_NAME_LABEL = join(REPO, 'samples', 'python', 'pod-name-label', 'pod_name_label.py');
export const GO_POD_NAME_LABEL_DIR = join(REPO, 'samples', 'go', 'pod-name-label');
/** The Python SDK the Python sample imports (`import kubeloop`), as `pip install sdk/python` would provide it. */
export const PYTHON_SDK_DIR = join(REPO, 'sdk', 'python');
/** Builds use the machine's go only (never a downloaded toolchain) and no workspace; /usr/local/go/bin is where it is installed here. */
export const GO_ENV = { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/local/go/bin`, CGO_ENABLED: '0', GOWORK: 'off', GOTOOLCHAIN: 'local' };

export interface RunningSample {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `go build` of a Go sample (default samples/go/pod-name-label) into <cache>/samples; returns the binary's path. */
export async function buildGoSample(dir = GO_POD_NAME_LABEL_DIR, binary = 'pod-name-label-go'): Promise<string> {
  const out = join(cacheRoot(), 'samples', binary);
  mkdirSync(join(cacheRoot(), 'samples'), { recursive: true });
  await promisify(execFile)('go', ['build', '-o', out, '.'], { cwd: dir, env: GO_ENV });
  return out;
}

/** Starts a sample with PORT=0 on 127.0.0.1 and resolves once it prints "listening on http://host:port". */
export function startSample(command: string, args: string[], env: Record<string, string> = {}): Promise<RunningSample> {
  const child = spawn(command, args, {
    env: { ...process.env, PYTHONPATH: PYTHON_SDK_DIR, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match?.[1]) {
        child.stdout.off('data', onData);
        resolve({ url: `${match[1]}/`, process: child, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${command} exited (${code ?? signal}) before listening:\n${output}`)));
  });
}
