// Batched calls (docs/router.md, "Batched calls"): the calls of one Loop's keys made within a short gathering
// window (spec.function.batch.windowMs) or while others are in flight are sent as one CloudEvents batch, to a
// function that advertised batches on a reply (x-kubeloop-batch-max). The work queue still runs each key alone
// and every key is decided and applied on its own; only the HTTP request is shared. Until a reply advertises
// batches every call goes alone at once, so a Loop's first wave never waits to learn it; a function that then
// fails to answer a batch as one is sent its calls one by one from then on, and one that refuses a batch as too
// large (413) is sent its calls again in batches of half the size.
import type { BatchInvoker, DispatchResult, FunctionInvoker, InvokeOptions } from './dispatch.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { Logger } from 'pino';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';

/** Batch requests in flight per Loop: one being answered while the next fills up. */
export const MAX_BATCHES_IN_FLIGHT = 2;
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

/**
 * Whether the calls waiting go now rather than when their gathering window ends; pure. They go once they fill
 * a batch, or once every worker of the Loop waits on a call: then no other call can join before one returns.
 */
export function gatheredEnough(waiting: number, batchLimit: number, outstanding: number, workers: number): boolean {
  return waiting >= batchLimit || outstanding >= workers;
}

export interface CallBatcherOptions {
  maxSize: number;
  /** How long a call waits for others to join its batch (spec.function.batch.windowMs); 0: the current event-loop turn. */
  windowMs?: number;
  /** The Loop's workers (maxConcurrency): when every one waits on a call, none can join and the batch goes. */
  workers?: number;
  maxInFlight?: number;
  /** Told once per URL that did not answer a batch (logged by the runner). */
  onNotBatch?: (url: string, reason: string) => void;
  /** Told when a URL refused a batch as too large, with the batch size it gets from now on. */
  onTooLarge?: (url: string, reason: string, cap: number) => void;
  /** Told of each batch the function answered, with its size (a refused one is sent again, and counted then). */
  onBatch?: (size: number) => void;
}

/** What a URL's function takes: batches of up to n (its last reply advertised them), or never (it refused one). */
type Known = number | 'never';

export class CallBatcher {
  #pending: PendingCall[] = [];
  #inFlight = 0;
  /** Calls handed to invoke and not answered yet (pending, in a batch or alone). */
  #outstanding = 0;
  #window: (() => void) | undefined;
  readonly #known = new Map<string, Known>();
  /** Batch sizes a URL accepts after it refused a larger batch's body (413); halved at each refusal. */
  readonly #sizeCap = new Map<string, number>();

  constructor(
    private readonly single: FunctionInvoker,
    private readonly batch: BatchInvoker,
    private readonly options: CallBatcherOptions,
  ) {}

  /** Same signature as the invoker it wraps: the reconcile does not know its call shares a request. */
  readonly invoke: FunctionInvoker = (request, options) => {
    const known = this.#known.get(options.url);
    this.#outstanding++;
    // No batches known to be welcome: the call goes alone at once, as it would without batching. A Loop's first
    // wave goes so too, rather than waiting for a first reply to say whether it may go together.
    if (!request.reconcileId || typeof known !== 'number') {
      return this.#callOne(request, options).finally(() => this.#outstanding--);
    }
    return new Promise((resolve) => {
      let answered = false;
      const done = (result: DispatchResult) => {
        if (answered) return;
        answered = true;
        this.#outstanding--;
        resolve(result);
      };
      this.#pending.push({ request: request as PendingCall['request'], options, resolve: done });
      if (gatheredEnough(this.#pending.length, this.#limit(options.url), this.#outstanding, this.options.workers ?? Infinity)) this.#flush();
      else this.#gather();
    });
  };

  /** The most calls the next request to `url` may carry now. */
  #limit(url: string): number {
    const known = this.#known.get(url);
    return typeof known === 'number' ? Math.min(this.options.maxSize, known, this.#sizeCap.get(url) ?? Infinity) : 1;
  }

  /** Starts the gathering window unless one is running: its calls go when it ends, at the latest. */
  #gather(): void {
    if (this.#window) return;
    const windowMs = this.options.windowMs ?? 0;
    const go = () => {
      this.#window = undefined;
      this.#flush();
    };
    if (windowMs > 0) {
      const timer = setTimeout(go, windowMs);
      this.#window = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(go);
      this.#window = () => clearImmediate(immediate);
    }
  }

  #flush(): void {
    this.#window?.();
    this.#window = undefined;
    while (this.#pending.length > 0) {
      const { url } = this.#pending[0]!.options;
      const limit = this.#limit(url);
      // Only batches count against the in-flight bound: single calls go as they would without batching.
      if (limit > 1 && this.#inFlight >= (this.options.maxInFlight ?? MAX_BATCHES_IN_FLIGHT)) break;
      const { batch, rest } = takeBatch(this.#pending, limit);
      this.#pending = rest;
      if (batch.length === 1) void this.#alone(batch);
      else void this.#sendBatch(batch);
    }
  }

  /** One call alone; its reply says whether the function takes batches. */
  async #callOne(request: ReconcileRequest, options: InvokeOptions): Promise<DispatchResult> {
    const result = await this.single(request, options);
    if (result.kind === 'ok' && this.#known.get(options.url) !== 'never') {
      if (result.batchMax) this.#known.set(options.url, result.batchMax);
      else this.#known.delete(options.url);
    }
    return result;
  }

  async #alone(calls: PendingCall[]): Promise<void> {
    await Promise.all(calls.map(async (call) => call.resolve(await this.#callOne(call.request, call.options))));
  }

  async #sendBatch(calls: PendingCall[]): Promise<void> {
    const { url } = calls[0]!.options;
    this.#inFlight++;
    try {
      const { headers: _trace, ...common } = calls[0]!.options;
      const outcome = await this.batch(calls.map((call) => ({ request: call.request, ...(call.options.headers ? { headers: call.options.headers } : {}) })), common);
      if (Array.isArray(outcome)) {
        this.options.onBatch?.(calls.length);
        calls.forEach((call, i) => call.resolve(outcome[i]!));
        return;
      }
      if ('tooLarge' in outcome) {
        // The body was too large, not its items: they go again first, in batches half this size (alone at 1,
        // where a 413 is that item's own refusal). Bounded: each refusal halves the cap.
        // Another batch in flight may already have lowered the cap further: the smaller one holds.
        const cap = Math.min(Math.max(1, Math.floor(calls.length / 2)), this.#sizeCap.get(url) ?? Infinity);
        this.#sizeCap.set(url, cap);
        this.options.onTooLarge?.(url, outcome.tooLarge, cap);
        this.#pending = [...calls, ...this.#pending];
        return;
      }
      if (this.#known.get(url) !== 'never') this.options.onNotBatch?.(url, outcome.notBatch);
      // It advertised batches and then refused one: single calls for good, these first.
      this.#known.set(url, 'never');
      await this.#alone(calls);
    } catch (error) {
      // The invokers classify every failure; this only keeps a bug from leaving keys waiting forever.
      for (const call of calls) call.resolve({ kind: 'failed', status: undefined, reason: 'Unreachable', message: `batch send failed: ${String(error)}` });
    } finally {
      this.#inFlight--;
      this.#flush();
    }
  }
}

/** Whether a Loop's calls are batched: it allows batches and the invoker can send them (HTTP; not in-process benches). */
function batchesCalls(loop: LoopConfig, invoke: FunctionInvoker): invoke is FunctionInvoker & { batch: BatchInvoker } {
  return loop.batchMaxSize >= 2 && invoke.batch !== undefined && loop.maxConcurrency >= 2;
}

/** The most keys of a backlog one worker carries, so their calls share a request (docs/router.md, "Batched calls"). */
export const KEY_GROUP_MAX = 4;

/** Keys one worker of the Loop carries at most (work-queue.ts groupMax): several only when its calls are batched. */
export function keyGroupMax(loop: LoopConfig, invoke: FunctionInvoker): number {
  return batchesCalls(loop, invoke) ? Math.min(KEY_GROUP_MAX, loop.batchMaxSize) : 1;
}

/** Batches a Loop's calls when it allows batches and the invoker can send them (HTTP; not in-process benches). */
export function loopBatcher(loop: LoopConfig, deps: { invoke: FunctionInvoker; logger: Logger; metrics: RouterMetrics }): CallBatcher | undefined {
  const { invoke, logger, metrics } = deps;
  if (!batchesCalls(loop, invoke)) return undefined;
  return new CallBatcher(invoke, invoke.batch, {
    maxSize: loop.batchMaxSize,
    windowMs: loop.batchWindowMs,
    // Every key a worker carries may wait on its call at once.
    workers: loop.maxConcurrency * keyGroupMax(loop, invoke),
    onBatch: (size) => metrics.functionBatches.observe({ loop: loop.id }, size),
    onNotBatch: (url, reason) => logger.info({ loop: loop.id, url, reason }, 'the function does not answer batches; calling it once per key'),
    onTooLarge: (url, reason, cap) => logger.info({ loop: loop.id, url, reason, cap }, 'the function refused a batch as too large; sending its calls again in smaller batches'),
  });
}
