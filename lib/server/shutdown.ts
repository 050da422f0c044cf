// Graceful shutdown on SIGTERM/SIGINT: fail readiness, optionally wait for endpoints to drop the pod,
// stop accepting, drain in-flight requests (fastify close, or the node:http function server's), then exit; a
// deadline forces exit.
import type { KubeloopServer } from './create-server.ts';

/** A server shutdown can drain without fastify (the node:http function server). */
export interface DrainableServer {
  log: { info(object: object | string, message?: string): void; error(object: object, message: string): void };
  /** Fails readiness. */
  beginClosing(): void;
  /** Stops accepting and resolves once in-flight requests finished. */
  close(): Promise<void>;
}

function drainable(server: KubeloopServer | DrainableServer): DrainableServer {
  if (!('app' in server)) return server;
  return { log: server.app.log, beginClosing: () => server.beginClosing(), close: () => server.app.close() };
}

export interface ShutdownOptions {
  /** Time between failing /readyz and closing, so Kubernetes removes the pod from Service endpoints first. Default 0. */
  drainDelayMs?: number;
  /** Exit with code 1 if draining has not finished after this long. Default 25 s (under the 30 s grace period). */
  timeoutMs?: number;
  signals?: NodeJS.Signals[];
  /** Called after a clean close; defaults to process.exit(0). Tests replace it. */
  exit?: (code: number) => void;
}

/** Installs signal handlers; returns a function that removes them (for tests and embedding). */
export function closeOnSignals(server: KubeloopServer | DrainableServer, options: ShutdownOptions = {}): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = drainable(server).log;
  let started = false;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (started) return;
    started = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    void shutdown(server, options).then(
      () => {
        log.info('shutdown complete');
        exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown did not complete cleanly');
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}

/** Fails readiness, waits drainDelayMs, then closes (no new connections, in-flight requests finish). */
export async function shutdown(served: KubeloopServer | DrainableServer, options: Pick<ShutdownOptions, 'drainDelayMs' | 'timeoutMs'> = {}): Promise<void> {
  const server = drainable(served);
  server.beginClosing();
  const timeoutMs = options.timeoutMs ?? 25_000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`in-flight requests still running after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([
      (async () => {
        if (options.drainDelayMs) await new Promise((resolve) => setTimeout(resolve, options.drainDelayMs));
        await server.close();
      })(),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
