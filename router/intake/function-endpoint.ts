// Where a running Loop's calls go: spec.function.url as it is, or spec.function.ref followed as it resolves
// (function-ref-watch.ts). Reports the Loop Ready while there is a URL and Ready=False with the reference's
// problem while there is none, and has every primary sent again when the URL moves.
import type { Logger } from 'pino';
import type { LoopConfig } from '../base/loop-spec.ts';
import { describeRef, type RefResolution } from '../base/function-ref.ts';
import type { LoopHealth } from '../reconcile/reconcile-decision.ts';
import { FunctionRefWatch } from './function-ref-watch.ts';
import type { InformerSource } from './informer-registry.ts';

export interface FunctionEndpointOptions {
  loop: LoopConfig;
  logger: Logger;
  onHealth?: ((loop: string, health: LoopHealth) => void) | undefined;
  /** The runner's caches are complete and it has not stopped: only then is a change reported and acted on. */
  live: () => boolean;
  /** The URL moved to a new one: every primary is sent again. */
  resendAll: () => void;
}

export class FunctionEndpoint {
  readonly #o: FunctionEndpointOptions;
  #url: string | undefined;
  #refWatch: FunctionRefWatch | undefined;

  constructor(options: FunctionEndpointOptions) {
    this.#o = options;
    this.#url = options.loop.functionUrl;
  }

  /** The URL calls go to now; undefined while a reference does not resolve. */
  get url(): string | undefined {
    return this.#url;
  }

  async start(registry: InformerSource): Promise<void> {
    const { functionRef, urlPolicy } = this.#o.loop;
    if (!functionRef) return;
    this.#refWatch = new FunctionRefWatch(functionRef, urlPolicy, (resolution) => this.#changed(resolution));
    await this.#refWatch.start(registry);
  }

  /** Resolves once a reference's namespace is listed; undefined for a plain URL. */
  synced(): Promise<void> | undefined {
    return this.#refWatch?.synced();
  }

  /** Ready while the function has a URL; Ready=False with the reference's problem while it has none. */
  report(): void {
    const { loop, onHealth } = this.#o;
    const resolution = this.#refWatch?.resolution;
    if (resolution && !resolution.ok) {
      onHealth?.(loop.id, { ready: false, reason: resolution.reason, message: `${resolution.message}; nothing is sent until it resolves` });
    } else {
      onHealth?.(loop.id, { ready: true, reason: 'Running', message: this.#refWatch ? `watching; calling ${this.#url}` : 'watching' });
    }
  }

  async stop(): Promise<void> {
    await this.#refWatch?.stop();
  }

  /** spec.function.ref resolved anew: calls go to the new URL; every primary is sent again when it changed. */
  #changed(resolution: RefResolution): void {
    const { loop, logger } = this.#o;
    const previous = this.#url;
    this.#url = resolution.ok ? resolution.url : undefined;
    const fields = { loop: loop.id, ref: loop.functionRef ? describeRef(loop.functionRef) : undefined };
    if (resolution.ok) logger.info({ ...fields, url: resolution.url }, 'function reference resolved');
    else logger.warn({ ...fields, reason: resolution.reason, err: resolution.message }, 'function reference does not resolve');
    if (!this.#o.live()) return;
    this.report();
    if (this.#url !== undefined && this.#url !== previous) this.#o.resendAll();
  }
}
