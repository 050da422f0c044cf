// `kubeloop dev --function <module> --loop <loop.yaml>`: runs a user's function as a local process, points its
// Loop at it, and on every change to the module's folder starts a new process, re-points the Loop (the
// router follows without restarting) and only then drains the old one, so calls in flight finish.
import { watch, type FSWatcher } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { startLocalProcess, type LocalProcess } from './local-processes.ts';

/** Changes under these folders never reload the function. */
const IGNORED = ['node_modules', 'dist', '.git', 'coverage'];

export function triggersReload(file: string | null): boolean {
  if (!file) return true;
  const parts = file.split(sep);
  return !parts.some((part) => IGNORED.includes(part)) && !/(~|\.swp|\.tmp)$/.test(file);
}

export interface UserFunctionOptions {
  /** Absolute path of the module (default export defineFunction(...)). */
  module: string;
  logDir: string;
  /** Points the Loop at a base URL (http://127.0.0.1:<port>); called after each new process is ready. */
  pointLoopAt(url: string): Promise<void>;
  say(line: string): void;
  /** Names its processes function-<name>-<generation> ("dev" by default). */
  name?: string;
  /** Quiet period after the last change before reloading. */
  debounceMs?: number;
}

export interface UserFunction {
  current(): LocalProcess;
  /** Resolves after the reload that the latest change triggered (for tests and the status line). */
  reloads(): number;
  stop(): Promise<void>;
}

export async function startUserFunction(options: UserFunctionOptions): Promise<UserFunction> {
  const start = (generation: number) =>
    // A short drain delay: /readyz fails first while the listener still answers what the router sends
    // before it has seen the Loop's new URL.
    startLocalProcess({ name: `function-${options.name ?? 'dev'}-${generation}`, args: ['function', options.module, '--drain-delay-seconds=1'], logDir: options.logDir });
  let generation = 1;
  let active = await start(generation);
  await options.pointLoopAt(active.url);
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
      options.say(`reload failed, still serving the previous version: ${(error as Error).message}`);
      return;
    }
    const old = active;
    active = next;
    await options.pointLoopAt(next.url);
    // SIGTERM: the old server fails /readyz, keeps answering for the drain delay, then closes after its calls finish.
    await old.process.stop(30_000);
    reloaded += 1;
    options.say(`reloaded ${relative(process.cwd(), options.module) || options.module}: ${next.url} (log ${next.process.logPath})`);
  };

  const watcher: FSWatcher = watch(dirname(options.module), { recursive: true }, (_event, file) => {
    if (!triggersReload(file)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      chain = chain.then(reload, reload);
    }, options.debounceMs ?? 200);
  });

  return {
    current: () => active,
    reloads: () => reloaded,
    async stop() {
      stopped = true;
      watcher.close();
      clearTimeout(timer);
      await chain.catch(() => {});
      await active.process.stop(10_000);
    },
  };
}
