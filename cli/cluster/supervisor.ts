// Spawns control-plane processes with their output in log files, waits for health, stops them in
// order, and kills every child still alive when the parent exits or gets SIGINT/SIGTERM/SIGHUP.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logDir: string;
  /** Start a new session so the process outlives the parent (`kubeloop cluster up --detach`). */
  detached?: boolean;
  /** Added to the parent's environment (e.g. a function's signing key, kept off the command line). */
  env?: NodeJS.ProcessEnv;
  /**
   * Its own process group, signalled as a whole: a user's command (`go run .`, a shell line) whose server is
   * a grandchild stops with it. Still killed when the parent exits, unlike `detached`.
   */
  processGroup?: boolean;
  /** Working directory (a user's project); the parent's by default. */
  cwd?: string;
}

export class SupervisedProcess {
  readonly name: string;
  readonly logPath: string;
  private child: ChildProcess;
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  private readonly group: boolean;

  constructor(spec: ProcessSpec) {
    this.name = spec.name;
    this.logPath = join(spec.logDir, `${spec.name}.log`);
    this.group = spec.processGroup ?? false;
    const fd = openSync(this.logPath, 'a');
    try {
      this.child = spawn(spec.command, spec.args, { stdio: ['ignore', fd, fd], detached: (spec.detached ?? false) || this.group, ...(spec.cwd ? { cwd: spec.cwd } : {}), env: spec.env ? { ...process.env, ...spec.env } : undefined });
    } finally {
      closeSync(fd);
    }
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        live.delete(this);
        resolve(this.exitCode);
      });
      this.child.on('error', () => {
        this.exitCode = -1;
        live.delete(this);
        resolve(-1);
      });
    });
    if (!spec.detached) live.add(this);
    else this.child.unref();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Last lines of the log, for error messages. */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    // The grace timer is cancelled once the process is gone, so it never holds the caller's event loop open.
    const grace = new AbortController();
    const timeout = sleep(graceMs, undefined, { signal: grace.signal }).then(
      () => 'timeout' as const,
      () => 'cancelled' as const,
    );
    try {
      if ((await Promise.race([this.exited, timeout])) === 'timeout') {
        this.signal('SIGKILL');
        await this.exited;
      }
    } finally {
      grace.abort();
    }
  }

  /** Polls check until it returns true; fails early with the log tail if the process dies. */
  async waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`${this.name} exited (code ${this.exitCode}) before ${what}; log ${this.logPath}:\n${this.logTail()}`);
      }
      try {
        if (await check()) return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      await sleep(100);
    }
    throw new Error(`${this.name} not ${what} after ${timeoutMs / 1000}s (${lastError || 'no error'}); log ${this.logPath}:\n${this.logTail()}`);
  }

  /** Synchronous last resort for exit handlers. */
  killNow(): void {
    if (this.running) this.signal('SIGKILL');
  }

  /** The child, or with processGroup its whole group (the negative pid). */
  private signal(name: NodeJS.Signals): void {
    if (this.group && this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, name);
        return;
      } catch {
        // The group is gone already; fall through to the child itself.
      }
    }
    this.child.kill(name);
  }
}

const live = new Set<SupervisedProcess>();
/** Directories to delete when the process exits without a clean stop. */
const tempDirs = new Set<string>();
let handlersInstalled = false;

export function registerTempDir(dir: string): void {
  tempDirs.add(dir);
  installExitHandlers();
}

export function unregisterTempDir(dir: string): void {
  tempDirs.delete(dir);
}

function killEverythingNow(): void {
  for (const proc of live) proc.killNow();
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort: a child killed a moment ago may still hold a file open.
    }
  }
  tempDirs.clear();
}

/**
 * Exit paths where async cleanup cannot run (process.exit, signals). When nobody else listens for a
 * signal, the handler kills the children, removes temp dirs and re-raises the default behaviour.
 */
export function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killEverythingNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      // Someone else handles the signal (the CLI stops gracefully, vitest tears down): let them; the
      // exit handler still catches whatever they leave behind.
      if (process.listenerCount(signal) > 1) return;
      killEverythingNow();
      process.off(signal, handler);
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
  }
}

export function spawnSupervised(spec: ProcessSpec): SupervisedProcess {
  installExitHandlers();
  return new SupervisedProcess(spec);
}
