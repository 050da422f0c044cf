// Batched calls (docs/router.md, "Batched calls"): the calls of one Loop's keys made while others are in
// flight are gathered and sent as one CloudEvents batch, to a function that advertised batches on a reply
// (x-kubeloop-batch-max). The work queue still runs each key alone and every key is decided and applied on
// its own; only the HTTP request is shared. A function that then fails to answer a batch as one is sent
// its calls one by one from then on.
import type { BatchInvoker, DispatchResult, FunctionInvoker, InvokeOptions } from './dispatch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { Logger } from 'pino';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';

/** Batch requests in flight per Loop: one being answered while the next fills up. */
export const MAX_BATCHES_IN_FLIGHT = 2;
/**
 * How long the calls made while a URL's first call is out wait to learn whether they may go together: a
 * function answers in milliseconds, and one that hangs must not hold every other key of its Loop for its
 * whole timeout, so after this they go alone.
 */
export const PROBE_WAIT_MS = 250;

export interface PendingCall {
  request: ReconcileRequest & { reconcileId: string };
  options: InvokeOptions;
  resolve: (result: DispatchResult) => void;
}

/** Calls that may share one HTTP request: same URL, timeout, signing key and CA bundle. */
export function sameTarget(a: InvokeOptions, b: InvokeOptions): boolean {
  return a.url === b.url && a.timeoutMs === b.timeoutMs && a.signingKey === b.signingKey && a.caBundle === b.caBundle;
}

/** The next batch: the oldest pending call and the calls after it that share its target, at most `maxSize`; pure. */
export function takeBatch<T extends { options: InvokeOptions }>(pending: readonly T[], maxSize: number): { batch: T[]; rest: T[] } {
  const first = pending[0];
  if (!first) return { batch: [], rest: [] };
  const batch: T[] = [];
  const rest: T[] = [];
  for (const call of pending) {
    if (batch.length < maxSize && sameTarget(first.options, call.options)) batch.push(call);
    else rest.push(call);
  }
  return { batch, rest };
}

export interface CallBatcherOptions {
  maxSize: number;
  maxInFlight?: number;
  /** PROBE_WAIT_MS unless given (tests). */
  probeWaitMs?: number;
  /** Told once per URL that did not answer a batch (logged by the runner). */
  onNotBatch?: (url: string, reason: string) => void;
  /** Counts each HTTP request a batch used. */
  onBatch?: (size: number) => void;
}

export class CallBatcher {
  #pending: PendingCall[] = [];
  #inFlight = 0;
  #scheduled = false;
  /** The batch size each URL's function advertised on its last reply (none: single calls). */
  readonly #advertised = new Map<string, number>();
  /** URLs whose first call is out: the calls made meanwhile wait to learn whether they may go together. */
  readonly #probing = new Set<string>();
  /** URLs whose first call has been out longer than PROBE_WAIT_MS: the calls waiting for it go alone. */
  readonly #probeOverdue = new Set<string>();
  /** URLs whose first call came back: without an advertisement their calls go alone, unhindered. */
  readonly #probed = new Set<string>();
  /** URLs whose function answered a batch as something else; they get single calls. */
  readonly #unbatched = new Set<string>();

  constructor(
    private readonly single: FunctionInvoker,
    private readonly batch: BatchInvoker,
    private readonly options: CallBatcherOptions,
  ) {}

  /** Same signature as the invoker it wraps: the reconcile does not know its call shares a request. */
  readonly invoke: FunctionInvoker = (request, options) => {
    const { url } = options;
    if (!request.reconcileId || this.#unbatched.has(url)) return this.#callOne(request, options);
    if (!this.#advertised.has(url)) {
      if (this.#probed.has(url)) return this.#callOne(request, options);
      if (!this.#probing.has(url)) {
        // The first call of a Loop (of a new URL) goes alone and tells whether the others may go together:
        // the initial list's first wave would otherwise all go out singly before any reply came back.
        this.#probing.add(url);
        const overdue = setTimeout(() => {
          this.#probeOverdue.add(url);
          this.#flush();
        }, this.options.probeWaitMs ?? PROBE_WAIT_MS);
        return this.#callOne(request, options).finally(() => {
          clearTimeout(overdue);
          this.#probing.delete(url);
          this.#probeOverdue.delete(url);
          this.#probed.add(url);
          this.#flush();
        });
      }
    }
    return new Promise((resolve) => {
      this.#pending.push({ request: request as PendingCall['request'], options, resolve });
      // Sent after the current turn of the event loop: the calls other keys make in the same turn join it.
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  };

  /** One call alone; its reply says whether the function takes batches. */
  async #callOne(request: ReconcileRequest, options: InvokeOptions): Promise<DispatchResult> {
    const result = await this.single(request, options);
    if (result.kind === 'ok') {
      if (result.batchMax) this.#advertised.set(options.url, result.batchMax);
      else this.#advertised.delete(options.url);
    }
    return result;
  }

  #flush(): void {
    while (this.#pending.length > 0) {
      const { url } = this.#pending[0]!.options;
      if (this.#probing.has(url) && !this.#probeOverdue.has(url)) break;
      const max = this.#unbatched.has(url) ? 1 : Math.min(this.options.maxSize, this.#advertised.get(url) ?? 1);
      // Only batches count against the in-flight bound: single calls go as they would without batching.
      if (max > 1 && this.#inFlight >= (this.options.maxInFlight ?? MAX_BATCHES_IN_FLIGHT)) break;
      const { batch, rest } = takeBatch(this.#pending, max);
      this.#pending = rest;
      if (batch.length === 1) {
        void this.#send(batch);
        continue;
      }
      this.#inFlight++;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#flush();
      });
    }
  }

  async #send(calls: PendingCall[]): Promise<void> {
    try {
      const { url } = calls[0]!.options;
      if (calls.length === 1 || this.#unbatched.has(url)) {
        await Promise.all(calls.map(async (call) => call.resolve(await this.#callOne(call.request, call.options))));
        return;
      }
      const { headers: _trace, ...common } = calls[0]!.options;
      this.options.onBatch?.(calls.length);
      const results = await this.batch(calls.map((call) => ({ request: call.request, ...(call.options.headers ? { headers: call.options.headers } : {}) })), common);
      if (!Array.isArray(results)) {
        if (!this.#unbatched.has(url)) this.options.onNotBatch?.(url, results.notBatch);
        this.#unbatched.add(url);
        await Promise.all(calls.map(async (call) => call.resolve(await this.single(call.request, call.options))));
        return;
      }
      calls.forEach((call, i) => call.resolve(results[i]!));
    } catch (error) {
      // The invokers classify every failure; this only keeps a bug from leaving keys waiting forever.
      for (const call of calls) call.resolve({ kind: 'failed', status: undefined, reason: 'Unreachable', message: `batch send failed: ${String(error)}` });
    }
  }
}

/** Batches a Loop's calls when it allows batches and the invoker can send them (HTTP; not in-process benches). */
export function loopBatcher(loop: LoopConfig, deps: { invoke: FunctionInvoker; logger: Logger; metrics: RouterMetrics }): CallBatcher | undefined {
  const { invoke, logger, metrics } = deps;
  if (loop.batchMaxSize < 2 || !invoke.batch || loop.maxConcurrency < 2) return undefined;
  return new CallBatcher(invoke, invoke.batch, {
    maxSize: loop.batchMaxSize,
    onBatch: (size) => metrics.functionBatches.observe({ loop: loop.id }, size),
    onNotBatch: (url, reason) => logger.info({ loop: loop.id, url, reason }, 'the function does not answer batches; calling it once per key'),
  });
}
