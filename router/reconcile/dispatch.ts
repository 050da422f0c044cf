// Dispatch: POSTs a ReconcileRequest to a function through the shared function client
// (lib/function-client: bounded reads, value budget, address checks, signing) in CloudEvents binary mode,
// and classifies the answer: ok, throttled (429 + Retry-After, capped), failed (5xx, timeout, unreachable,
// refused address, garbage) or rejected (4xx: the request itself is wrong; retrying will not help).
// Messages carry status codes and fixed reasons only; a reply's body goes to the log (`detail`).
import { randomUUID } from 'node:crypto';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import { createFunctionClient, type CallOutcome, type FunctionClientOptions, type FunctionOrigin } from '../../lib/function-client/function-client.ts';
import type { AddressGuard } from '../../lib/function-client/guarded-connect.ts';
import { InFlightBytes } from '../../lib/function-client/reply-limits.ts';
import { parseRetryAfter } from '../../lib/function-client/retry-after.ts';
import { audienceOf, type SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { CLOUDEVENT_TYPE, type ReconcileRequest, type ReconcileResponse } from '../../lib/contract/types.ts';
import { advertisedBatchMax, BATCH_MAX_HEADER, encodeBatchRequest, splitBatchReply } from '../../lib/contract/batch.ts';

export { DEFAULT_MAX_REPLY_BYTES as DEFAULT_MAX_RESPONSE_BYTES } from '../../lib/function-client/reply-limits.ts';

export type DispatchFailureReason = 'Unreachable' | 'AddressRefused' | 'Overloaded' | 'Timeout' | 'ServerError' | 'InvalidResponse' | 'InvalidSignature';

export type DispatchResult =
  /** `batchMax`: the function answers batches of up to this many (its x-kubeloop-batch-max header). */
  | { kind: 'ok'; status: number; response: ReconcileResponse; batchMax?: number }
  | { kind: 'throttled'; status: 429; retryAfterMs: number | undefined; message: string; detail?: string }
  | { kind: 'failed'; status: number | undefined; reason: DispatchFailureReason; message: string; detail?: string }
  | { kind: 'rejected'; status: number; message: string; detail?: string };

export interface InvokeOptions {
  url: string;
  timeoutMs: number;
  /** Sign requests and require signed replies (the Loop's spec.function.signingSecretRef). */
  signingKey?: SigningKeys | undefined;
  /** PEM CA certificates to trust for an https function URL (spec.function.caBundle). */
  caBundle?: string | undefined;
  /** Sent as they are: the trace context (traceparent, tracestate, ce-traceparent). */
  headers?: Record<string, string>;
}

/** One request of a batch, with the trace headers of its own call span. */
export interface BatchInvokeItem {
  request: ReconcileRequest & { reconcileId: string };
  headers?: Record<string, string>;
}

/**
 * Sends several requests of one Loop in one HTTP request: one result per item, in order; `notBatch` when the
 * function did not answer as a batch (it does not speak batches: send the items one by one); `tooLarge` when
 * it refused the batch's body as too large (413: send the items in smaller batches).
 */
export type BatchInvoker = (items: readonly BatchInvokeItem[], options: Omit<InvokeOptions, 'headers'>) => Promise<BatchOutcome>;

/** What a batch request came to: one result per item, or the batch as a whole was not taken. */
export type BatchOutcome = DispatchResult[] | { notBatch: string } | { tooLarge: string };

/**
 * How the router reaches a function: over HTTP (createHttpInvoker), or in-process in benchmarks; `batch` when it can
 * send batches; `preconnect` when it can open a function's connection ahead of the first call (never reporting).
 */
export type FunctionInvoker = ((request: ReconcileRequest, options: InvokeOptions) => Promise<DispatchResult>) & { batch?: BatchInvoker; preconnect?: (origin: FunctionOrigin) => void };

/** A reply may ask for at most this many actions unless configured otherwise; more is InvalidResponse. */
export const DEFAULT_MAX_ACTIONS_PER_REPLY = 1000;

/** Classifies a function's answer; pure, so every branch is unit-tested. */
export function classifyOutcome(outcome: CallOutcome, options: { maxActions?: number; maxRetryAfterMs?: number } = {}): DispatchResult {
  const maxActions = options.maxActions ?? DEFAULT_MAX_ACTIONS_PER_REPLY;
  if (outcome.kind === 'failed') {
    const { reason, message } = outcome;
    const mapped: DispatchFailureReason = reason === 'TooLarge' || reason === 'TooManyValues' || reason === 'NotJson' ? 'InvalidResponse' : reason;
    return { kind: 'failed', status: outcome.status, reason: mapped, message };
  }
  if (outcome.kind === 'status') {
    const { status, detail } = outcome;
    const fromLog = `HTTP ${status} from the function (its body is in the router's log)`;
    if (status === 429) return { kind: 'throttled', status, retryAfterMs: parseRetryAfter(outcome.headers['retry-after'], { ...(options.maxRetryAfterMs !== undefined ? { maxMs: options.maxRetryAfterMs } : {}) }), message: fromLog, detail };
    if (status >= 500) return { kind: 'failed', status, reason: 'ServerError', message: fromLog, detail };
    if (status >= 400) return { kind: 'rejected', status, message: fromLog, detail };
    return { kind: 'failed', status, reason: 'InvalidResponse', message: `HTTP ${status}: only 200 carries a ReconcileResponse`, detail };
  }
  // Counted before schema validation, so a reply of 200,000 actions costs a length check, not a walk.
  const actions = (outcome.value as { actions?: unknown } | null)?.actions;
  if (Array.isArray(actions) && actions.length > maxActions) {
    return { kind: 'failed', status: 200, reason: 'InvalidResponse', message: `reply has ${actions.length} actions; at most ${maxActions} are accepted per reply (nothing was applied)` };
  }
  const validation = validateReconcileResponse(outcome.value);
  if (!validation.ok) {
    return { kind: 'failed', status: 200, reason: 'InvalidResponse', message: `reply is not a ReconcileResponse: ${validation.errors.slice(0, 5).join('; ')}` };
  }
  const batchMax = advertisedBatchMax(outcome.headers[BATCH_MAX_HEADER]);
  return { kind: 'ok', status: 200, response: validation.value, ...(batchMax ? { batchMax } : {}) };
}

/** The CloudEvents source of the router's events for a request's Loop (namespaced Loops: <namespace>/<name>). */
const eventSource = (request: ReconcileRequest): string => `/kubeloop/router/loops/${request.loopNamespace ? `${request.loopNamespace}/` : ''}${request.loop}`;

type ClassifyOptions = Parameters<typeof classifyOutcome>[1];

/**
 * Classifies the answer to a batch (CloudEvents batch mode) item by item; pure. A whole-batch failure
 * (unreachable, timeout, 5xx, a bad signature) is every item's; 400, 404, 405 and 415, or a 200 that is no
 * batch reply, mean the function does not take batches (`notBatch`); 413 refused the batch's size, not its
 * items (`tooLarge`). Inside a batch reply each item is classified as its own reply would be, and an item
 * answered never or twice is that item's InvalidResponse.
 */
export function classifyBatchOutcome(outcome: CallOutcome, ids: readonly string[], options: ClassifyOptions = {}): BatchOutcome {
  if (outcome.kind === 'status' && [400, 404, 405, 415].includes(outcome.status)) return { notBatch: `HTTP ${outcome.status} to a batch` };
  if (outcome.kind === 'status' && outcome.status === 413) return { tooLarge: `HTTP 413 to a batch of ${ids.length}` };
  if (outcome.kind !== 'reply') {
    const whole = classifyOutcome(outcome, options);
    return ids.map(() => whole);
  }
  const split = splitBatchReply('cloudevents', ids, outcome.value);
  if (!(split instanceof Map)) return split;
  return ids.map((id): DispatchResult => {
    const item = split.get(id)!;
    if (item.kind === 'response') return classifyOutcome({ kind: 'reply', status: 200, headers: outcome.headers, value: item.value }, options);
    if (item.kind === 'error') return classifyOutcome({ kind: 'status', status: item.error.statusCode, headers: {}, detail: `${item.error.code}: ${item.error.message}` }, options);
    return { kind: 'failed', status: 200, reason: 'InvalidResponse', message: item.message };
  });
}

export interface HttpInvokerOptions {
  /** Connections per function origin. */
  connections?: number;
  /** Reply size limit, counted as the reply streams in; a bigger reply is garbage, not a reason to run out of memory. */
  maxResponseBytes?: number;
  /** JSON values one reply may hold, counted before parsing (default 200,000). */
  maxReplyValues?: number;
  /** Reply bytes being read at once across every Loop (default 64 MiB). */
  maxReplyBytesInFlight?: number;
  /** Most actions one reply may ask for (default DEFAULT_MAX_ACTIONS_PER_REPLY). */
  maxActionsPerReply?: number;
  /** The longest a 429's Retry-After may delay a key: the queue's backoff maximum. */
  maxRetryAfterMs?: number;
  /** Where calls may connect (start-router.ts builds it from the address policy and the API server). */
  addressGuard?: AddressGuard;
  /** Calls wait for it: the guard's first reading of the API server's addresses, made while the Loops start. */
  ready?: Promise<unknown>;
}

/** An invoker backed by the shared function client. */
export function createHttpInvoker(options: HttpInvokerOptions = {}): FunctionInvoker & { close(): Promise<void> } {
  const clientOptions: FunctionClientOptions = {
    ...(options.connections !== undefined ? { connections: options.connections } : {}),
    limits: {
      ...(options.maxResponseBytes !== undefined ? { maxBytes: options.maxResponseBytes } : {}),
      ...(options.maxReplyValues !== undefined ? { maxValues: options.maxReplyValues } : {}),
    },
    inFlight: new InFlightBytes(options.maxReplyBytesInFlight),
    ...(options.addressGuard ? { addressGuard: options.addressGuard } : {}),
  };
  const client = createFunctionClient(clientOptions);
  const classify = { ...(options.maxActionsPerReply !== undefined ? { maxActions: options.maxActionsPerReply } : {}), ...(options.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: options.maxRetryAfterMs } : {}) };
  const invoke = async (request: ReconcileRequest, { url, timeoutMs, signingKey, caBundle, headers }: InvokeOptions): Promise<DispatchResult> => {
    await options.ready;
    const outcome = await client.call({
      url,
      timeoutMs,
      body: JSON.stringify(request),
      caBundle,
      // Each attempt gets its own id and timestamp; the reply must carry the same id.
      signing: signingKey ? { keys: signingKey, audience: audienceOf(request) } : undefined,
      headers: {
        // CloudEvents binary mode: the body stays a plain ReconcileRequest.
        'ce-specversion': '1.0',
        'ce-id': request.reconcileId ?? randomUUID(),
        'ce-source': eventSource(request),
        'ce-type': CLOUDEVENT_TYPE,
        ...headers,
      },
    });
    return classifyOutcome(outcome, classify);
  };
  const batch: BatchInvoker = async (items, { url, timeoutMs, signingKey, caBundle }) => {
    await options.ready;
    const first = items[0]!.request;
    const encoded = encodeBatchRequest('cloudevents', items.map((item) => ({ request: item.request, traceparent: item.headers?.traceparent, tracestate: item.headers?.tracestate })), eventSource(first));
    // One signature covers the whole batch: every item is of the same Loop, so of the same audience.
    const outcome = await client.call({ url, timeoutMs, body: encoded.body, caBundle, replyItems: items.length, signing: signingKey ? { keys: signingKey, audience: audienceOf(first) } : undefined, headers: { 'content-type': encoded.contentType } });
    return classifyBatchOutcome(outcome, items.map((item) => item.request.reconcileId), classify);
  };
  // After the guard's first reading, as a call is: the API server's addresses are refused from the first connect on.
  const preconnect = (origin: FunctionOrigin): void => void Promise.resolve(options.ready).then(() => client.preconnect(origin)).catch(() => undefined);
  return Object.assign(invoke, { batch, preconnect, close: () => client.close() });
}
