// `kubeloop dev --function <module>` / `--function-command "<cmd>"`: runs a user's function as a local process
// and on every change to its folder starts a new process, points the Loop or the Service's local address at
// it (the router and gateway follow without restarting) and only then drains the old one, so calls in flight
// finish; a new version that does not start leaves the previous one serving.
import { watch, type FSWatcher } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { startLocalProcess, type LocalProcess } from './local-processes.ts';

/** Changes under these folders never reload the function. */
const IGNORED = ['node_modules', 'dist', '.git', 'coverage', '__pycache__', '.venv'];

export function triggersReload(file: string | null): boolean {
  if (!file) return true;
  const parts = file.split(sep);
  return !parts.some((part) => IGNORED.includes(part)) && !/(~|\.swp|\.tmp|\.pyc)$/.test(file);
}

/** A TypeScript/JavaScript module served by `kubeloop function`, or a command run in a project folder. */
export type FunctionSource = { module: string } | { command: string; cwd: string };

/** What a user recognises the function by: the module's path or the command line. */
export function describeSource(source: FunctionSource): string {
  return 'module' in source ? relative(process.cwd(), source.module) || source.module : `\`${source.command}\``;
}

export interface UserFunctionOptions {
  source: FunctionSource;
  logDir: string;
  /** Points the Loop (or the Service's local address) at a base URL (http://127.0.0.1:<port>); called after each new process is ready. */
  pointLoopAt(url: string): Promise<void>;
  say(line: string): void;
  /** Names its processes function-<name>-<generation> ("dev" by default). */
  name?: string;
  /** Quiet period after the last change before reloading. */
  debounceMs?: number;
  /** Added to each process's environment (its signing key). */
  env?: NodeJS.ProcessEnv;
}

export interface UserFunction {
  /** The process serving now; none while the first one has not started (its problem() says why). */
  current(): LocalProcess | undefined;
  /** Why nothing answers (the process exited, or did not start), or undefined while it runs. */
  problem(): string | undefined;
  /** The log of the current process, or of the last one that failed to start. */
  logPath(): string;
  /** Resolves after the reload that the latest change triggered (for tests and the status line). */
  reloads(): number;
  stop(): Promise<void>;
}

export async function startUserFunction(options: UserFunctionOptions): Promise<UserFunction> {
  const { source } = options;
  const start = (generation: number) =>
    startLocalProcess({
      name: `function-${options.name ?? 'dev'}-${generation}`,
      // A short drain delay: /readyz fails first while the listener still answers what the router sends
      // before it has seen the Loop's new URL.
      args: 'module' in source ? ['function', source.module, '--drain-delay-seconds=1'] : [],
      // `go run .` compiles first.
      ...('command' in source ? { shell: source, readyTimeoutMs: 180_000 } : {}),
      ...(options.env ? { env: options.env } : {}),
      logDir: options.logDir,
    });
  let generation = 1;
  let active: LocalProcess | undefined;
  let failed: string | undefined;
  const logOf = (g: number) => join(options.logDir, `function-${options.name ?? 'dev'}-${g}.log`);
  // A function that does not start is reported (problem(), dev's LocalFunction condition), not fatal: the
  // user fixes it and saves.
  try {
    active = await start(generation);
    await options.pointLoopAt(active.url);
  } catch (error) {
    failed = (error as Error).message;
    options.say(`${describeSource(source)} did not start: ${failed}`);
  }
  let reloaded = 0;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  const reload = async (): Promise<void> => {
    if (stopped) return;
    generation += 1;
    let next: LocalProcess;
    try {
      next = await start(generation);
    } catch (error) {
      if (!active?.process.running) failed = (error as Error).message;
      options.say(`reload failed${active?.process.running ? ', still serving the previous version' : ''}: ${(error as Error).message}`);
      return;
    }
    const old = active;
    active = next;
    failed = undefined;
    await options.pointLoopAt(next.url);
    // SIGTERM: the old server fails /readyz, keeps answering for the drain delay, then closes after its calls finish.
    await old?.process.stop(30_000);
    reloaded += 1;
    options.say(`reloaded ${describeSource(source)}: ${next.url} (log ${next.process.logPath})`);
  };

  const folder = 'module' in source ? dirname(source.module) : source.cwd;
  const watcher: FSWatcher = watch(folder, { recursive: true }, (_event, file) => {
    if (!triggersReload(file)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      chain = chain.then(reload, reload);
    }, options.debounceMs ?? 200);
  });

  return {
    current: () => active,
    problem: () => (active?.process.running ? undefined : active ? 'its process exited' : `it did not start (${failed ?? 'not started yet'})`),
    logPath: () => active?.process.logPath ?? logOf(generation),
    reloads: () => reloaded,
    async stop() {
      stopped = true;
      watcher.close();
      clearTimeout(timer);
      await chain.catch(() => {});
      await active?.process.stop(10_000);
    },
  };
}
