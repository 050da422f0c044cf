// One chain of status writes per hook, each write bounded by a timeout: a hook whose status write hangs
// (a team's own hook on admissionhooks/status holding it, an API server slow on one object) delays only its
// own next write, never the reconcile or another hook's status. A write queued behind a running one is
// replaced by a newer one (only the latest conditions matter).
import type { Logger } from 'pino';

/** How long one status write may take before it is given up (and logged); the next write tries again. */
export const STATUS_WRITE_TIMEOUT_MS = 10_000;

interface Chain {
  running: Promise<void>;
  queued?: () => Promise<void>;
}

export class HookStatusChains {
  readonly #chains = new Map<string, Chain>();

  constructor(private readonly logger: Logger) {}

  /** Runs `write` after the hook's running write, if any; a write still waiting there is dropped for this one. */
  enqueue(hookId: string, write: () => Promise<void>): void {
    const chain = this.#chains.get(hookId);
    if (chain) {
      chain.queued = write;
      return;
    }
    this.#run(hookId, write);
  }

  #run(hookId: string, write: () => Promise<void>): void {
    const chain: Chain = {
      running: write()
        .catch((error: unknown) => this.logger.warn({ err: error, hook: hookId }, 'could not write AdmissionHook status'))
        .then(() => {
          const next = chain.queued;
          this.#chains.delete(hookId);
          if (next) this.#run(hookId, next);
        }),
    };
    this.#chains.set(hookId, chain);
  }

  /** Resolves when every chain is idle (stop, tests). */
  async idle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.all([...this.#chains.values()].map((chain) => chain.running));
  }
}
