// Starts the router, the functions and the webhook as local child processes (`node cli/bin.js ...`, the router from
// its startup snapshot when npm run build made one for this Node), each with its log file, and waits until each is ready.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { freePort } from '../cluster/free-port.ts';
import { spawnSupervised, type SupervisedProcess } from '../cluster/supervisor.ts';
import { routerSnapshot } from '../router-snapshot.ts';

export interface LocalProcess {
  name: string;
  /** Base URL: http://127.0.0.1:<port> (https for the webhook). */
  url: string;
  /** http://127.0.0.1:<ops port> when started with opsPort (the webhook's /healthz, /readyz, /metrics). */
  opsUrl?: string;
  process: SupervisedProcess;
}

/** cli/bin.js of this checkout, from cli/dev/ (source) or dist/cli/dev/ (compiled). */
export function cliEntry(): string {
  for (const relative of ['../../cli/bin.js', '../../../cli/bin.js']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('cannot find cli/bin.js next to cli/dev/');
}

/**
 * What runs before `args` (`router ...`, `function ...`): cli/bin.js, or for the router the snapshot's Node flags
 * when one was made for this Node (cli/router-snapshot.ts); its start is then mostly restoring the loaded bundle.
 */
function entryArgs(args: string[], env: NodeJS.ProcessEnv): string[] {
  const cli = cliEntry();
  if (args[0] !== 'router') return [cli];
  const snapshot = routerSnapshot(join(dirname(cli), '..', 'dist'), { ...process.env, ...env });
  return 'nodeArgs' in snapshot ? snapshot.nodeArgs : [cli];
}

// Readiness probes accept the webhook's self-signed certificate; created on demand, closed by stopLocalProcesses.
let insecure: Agent | undefined;

async function answers200(url: string): Promise<boolean> {
  insecure ??= new Agent({ connect: { rejectUnauthorized: false } });
  const reply = await request(url, { dispatcher: insecure, headersTimeout: 2000, bodyTimeout: 2000 });
  await reply.body.dump();
  return reply.statusCode === 200;
}

export interface StartOptions {
  name: string;
  /** Arguments after `node cli/bin.js`; the port flag is added. */
  args: string[];
  logDir: string;
  scheme?: 'http' | 'https';
  /** Path polled until it answers 200. */
  readyPath?: string;
  /** The process serves probes on a separate --ops-port (the webhook): given a free one and polled there. */
  opsPort?: boolean;
  readyTimeoutMs?: number;
  /** Added to the process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Node flags before cli/bin.js (or the router's snapshot): what the image's ENTRYPOINT puts there (cli/node-flags.ts). */
  nodeFlags?: readonly string[];
  /**
   * A user's shell command instead of `node cli/bin.js args` (`python3 function.py`, `go run .`), run in cwd in
   * its own process group, told where to listen by PORT and HOST (what the SDKs read).
   */
  shell?: { command: string; cwd: string };
}

let sharedEnv: NodeJS.ProcessEnv = {};

/** Environment every process started from now on gets as well (kubeloop dev --tracing: where spans go). */
export function setSharedEnv(env: NodeJS.ProcessEnv): void {
  sharedEnv = env;
}

export async function startLocalProcess(options: StartOptions): Promise<LocalProcess> {
  const host = '127.0.0.1';
  const port = await freePort();
  const url = `${options.scheme ?? 'http'}://${host}:${port}`;
  const opsPort = options.opsPort ? await freePort() : undefined;
  const opsUrl = opsPort === undefined ? undefined : `http://127.0.0.1:${opsPort}`;
  const env = { ...sharedEnv, ...options.env };
  const proc = options.shell
    ? spawnSupervised({ name: options.name, command: '/bin/sh', args: ['-c', options.shell.command], cwd: options.shell.cwd, processGroup: true, logDir: options.logDir, env: { ...env, PORT: String(port), HOST: host } })
    : spawnSupervised({
        name: options.name,
        command: process.execPath,
        // Loopback only: dev processes run unauthenticated and must not be reachable from the network.
        args: [...(options.nodeFlags ?? []), ...entryArgs(options.args, env), ...options.args, `--port=${port}`, ...(opsPort === undefined ? [] : [`--ops-port=${opsPort}`]), `--host=${host}`],
        logDir: options.logDir,
        env,
      });
  const readyUrl = `${opsUrl ?? url}${options.readyPath ?? '/readyz'}`;
  await proc.waitUntil(`ready at ${readyUrl}`, () => answers200(readyUrl), options.readyTimeoutMs ?? 60_000);
  return { name: options.name, url, ...(opsUrl ? { opsUrl } : {}), process: proc };
}

/** Stops processes in reverse start order (router before the functions it calls). */
export async function stopLocalProcesses(processes: LocalProcess[]): Promise<void> {
  for (const p of [...processes].reverse()) await p.process.stop(10_000);
  // Kept-alive sockets of the readiness probes would hold the event loop open after everything stopped.
  await insecure?.close();
  insecure = undefined;
}
