// Batched calls (docs/contract.md, "Batches"): several ReconcileRequests of one Loop in one HTTP request,
// as a plain JSON ReconcileBatchRequest or a CloudEvents batch (application/cloudevents-batch+json), and
// the reply with one answer or one error per item. Pure encoding and decoding, shared by the router, the
// runtime, replay and conformance; the Python and Go SDKs implement the same shapes.
import { CLOUDEVENT_RESPONSE_TYPE, CLOUDEVENT_TYPE, CONTRACT_API_VERSION, type ReconcileRequest } from './types.ts';

export const BATCH_REQUEST_KIND = 'ReconcileBatchRequest';
export const BATCH_RESPONSE_KIND = 'ReconcileBatchResponse';
export const CLOUDEVENT_BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';
/** The type of a reply event that carries one item's error instead of its ReconcileResponse. */
export const CLOUDEVENT_ERROR_TYPE = 'dev.kubeloop.reconcile.error.v1';
/** Most items one batch may carry; a function refuses more with 400 (spec.function.batch.maxSize is capped to it). */
export const MAX_BATCH_ITEMS = 64;

/**
 * Sent by a function on its replies: it answers batches of up to this many items. A router sends batches
 * only to a function that said so, so a function that does not speak batches never receives one.
 */
export const BATCH_MAX_HEADER = 'x-kubeloop-batch-max';

/** The batch size a reply's headers advertise (BATCH_MAX_HEADER), or undefined when it advertises none. */
export function advertisedBatchMax(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^[0-9]{1,4}$/.test(text.trim())) return undefined;
  const max = Math.min(Number(text), MAX_BATCH_ITEMS);
  return max >= 2 ? max : undefined;
}

export type BatchFormat = 'json' | 'cloudevents';

/** One item's failure inside a batch reply: what its own call would have answered with (status and code). */
export interface BatchItemError {
  statusCode: number;
  code: string;
  message: string;
}

/** One item of a batch reply, by the id of its request (the reconcileId, or the CloudEvent id). */
export type BatchItemReply = { id: string; response: unknown } | { id: string; error: BatchItemError };

/** One request of a batch and the trace context of its call. */
export interface BatchItemRequest {
  request: ReconcileRequest & { reconcileId: string };
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

function traceAttributes(item: { traceparent?: string | undefined; tracestate?: string | undefined }): Record<string, string> {
  return { ...(item.traceparent ? { traceparent: item.traceparent } : {}), ...(item.tracestate ? { tracestate: item.tracestate } : {}) };
}

/** The body and content type of a batch request. `source` is the CloudEvents source of the router's events. */
export function encodeBatchRequest(format: BatchFormat, items: readonly BatchItemRequest[], source: string): { contentType: string; body: string } {
  if (format === 'json') {
    return { contentType: 'application/json', body: JSON.stringify({ apiVersion: CONTRACT_API_VERSION, kind: BATCH_REQUEST_KIND, items: items.map((i) => i.request) }) };
  }
  const events = items.map((item) => ({
    specversion: '1.0',
    id: item.request.reconcileId,
    source,
    type: CLOUDEVENT_TYPE,
    datacontenttype: 'application/json',
    ...traceAttributes(item),
    data: item.request,
  }));
  return { contentType: CLOUDEVENT_BATCH_MEDIA_TYPE, body: JSON.stringify(events) };
}

/** A decoded batch: each item's id, its value still unchecked, and its own trace context (CloudEvents). */
export type DecodedBatch =
  | { ok: true; format: BatchFormat; items: Array<{ id: string; value: unknown; traceparent?: string; tracestate?: string }> }
  | { ok: false; code: 'InvalidRequest' | 'InvalidCloudEvent'; message: string };

/** True when a parsed plain JSON body is a ReconcileBatchRequest rather than one ReconcileRequest. */
export function isJsonBatch(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { kind?: unknown }).kind === BATCH_REQUEST_KIND;
}

/**
 * The items of a batch request. The batch itself is refused as a whole (400) only when it is not a batch:
 * not a list, empty, too long, an item without an id, or two items with the same id (the reply could not say
 * which answer is whose). Everything wrong inside one item is that item's error, found later.
 */
export function decodeBatchRequest(format: BatchFormat, value: unknown): DecodedBatch {
  const code = format === 'json' ? 'InvalidRequest' : 'InvalidCloudEvent';
  const fail = (message: string): DecodedBatch => ({ ok: false, code, message });
  let entries: unknown;
  if (format === 'json') {
    const batch = value as { apiVersion?: unknown; items?: unknown };
    if (batch.apiVersion !== undefined && batch.apiVersion !== CONTRACT_API_VERSION) return fail(`batch apiVersion ${JSON.stringify(batch.apiVersion)} is not supported; want ${CONTRACT_API_VERSION}`);
    entries = batch.items;
    if (!Array.isArray(entries)) return fail(`a ${BATCH_REQUEST_KIND} needs items: a list of ReconcileRequests`);
  } else {
    entries = value;
    if (!Array.isArray(entries)) return fail('a CloudEvents batch must be a JSON array of structured-mode events');
  }
  const list = entries as unknown[];
  if (list.length === 0) return fail('the batch has no items');
  if (list.length > MAX_BATCH_ITEMS) return fail(`the batch has ${list.length} items; at most ${MAX_BATCH_ITEMS} are accepted`);
  const seen = new Set<string>();
  const items: Array<{ id: string; value: unknown; traceparent?: string; tracestate?: string }> = [];
  for (const [index, entry] of list.entries()) {
    const object = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
    const id = format === 'json' ? object?.reconcileId : object?.id;
    if (typeof id !== 'string' || id === '') return fail(`batch item ${index} has no ${format === 'json' ? 'reconcileId' : 'CloudEvent id'}; every item of a batch needs one`);
    if (seen.has(id)) return fail(`batch items ${JSON.stringify(id)} appear twice; ids must be unique in a batch`);
    seen.add(id);
    const trace = format === 'cloudevents' ? stringAttributes(object, ['traceparent', 'tracestate']) : {};
    items.push({ id, value: entry, ...trace });
  }
  return { ok: true, format, items };
}

function stringAttributes(object: Record<string, unknown> | undefined, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) if (typeof object?.[name] === 'string') out[name] = object[name];
  return out;
}

/** The reply to a batch, in its format: one entry per item, in the order given. */
export function encodeBatchReply(format: BatchFormat, functionName: string, items: readonly BatchItemReply[]): { contentType: string; body: string } {
  if (format === 'json') {
    const out = items.map((item) => ('error' in item ? { reconcileId: item.id, error: item.error } : { reconcileId: item.id, response: item.response }));
    return { contentType: 'application/json; charset=utf-8', body: JSON.stringify({ apiVersion: CONTRACT_API_VERSION, kind: BATCH_RESPONSE_KIND, items: out }) };
  }
  const time = new Date().toISOString();
  const source = `/kubeloop/functions/${functionName}`;
  const events = items.map((item) => ({
    specversion: '1.0',
    id: item.id,
    source,
    type: 'error' in item ? CLOUDEVENT_ERROR_TYPE : CLOUDEVENT_RESPONSE_TYPE,
    time,
    datacontenttype: 'application/json',
    data: 'error' in item ? { ...item.error, reconcileId: item.id } : item.response,
  }));
  return { contentType: `${CLOUDEVENT_BATCH_MEDIA_TYPE}; charset=utf-8`, body: JSON.stringify(events) };
}

/** What a batch reply says about one requested item. */
export type BatchItemOutcome =
  | { kind: 'response'; value: unknown }
  | { kind: 'error'; error: BatchItemError }
  /** The reply has no answer, or more than one, for the item: a per-item InvalidResponse, retried. */
  | { kind: 'invalid'; message: string };

/**
 * Splits a parsed batch reply into one outcome per requested id. `notBatch` when the reply is no batch
 * reply at all (a function that does not speak batches answered as if called once): the caller then sends
 * the items one by one. An answer for an id nobody asked about is ignored; a missing or repeated answer is
 * that item's error alone, never the others'.
 */
export function splitBatchReply(format: BatchFormat, ids: readonly string[], value: unknown): { notBatch: string } | Map<string, BatchItemOutcome> {
  let entries: unknown[];
  if (format === 'json') {
    const reply = value as { kind?: unknown; items?: unknown } | null;
    if (typeof reply !== 'object' || reply === null || reply.kind !== BATCH_RESPONSE_KIND || !Array.isArray(reply.items)) return { notBatch: `the reply is not a ${BATCH_RESPONSE_KIND}` };
    entries = reply.items;
  } else {
    if (!Array.isArray(value)) return { notBatch: 'the reply is not a CloudEvents batch (a JSON array of events)' };
    entries = value;
  }
  const wanted = new Set(ids);
  const found = new Map<string, BatchItemOutcome[]>();
  for (const entry of entries) {
    const object = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    const id = format === 'json' ? object.reconcileId : object.id;
    if (typeof id !== 'string' || !wanted.has(id)) continue;
    const outcome = format === 'json' ? jsonItemOutcome(object) : eventItemOutcome(object);
    found.set(id, [...(found.get(id) ?? []), outcome]);
  }
  const out = new Map<string, BatchItemOutcome>();
  for (const id of ids) {
    const answers = found.get(id) ?? [];
    if (answers.length === 1) out.set(id, answers[0]!);
    else out.set(id, { kind: 'invalid', message: answers.length === 0 ? 'the batch reply has no answer for this item (nothing was applied)' : `the batch reply answers this item ${answers.length} times (nothing was applied)` });
  }
  return out;
}

function itemError(value: unknown): BatchItemOutcome {
  const error = value as Partial<BatchItemError> | null;
  if (typeof error !== 'object' || error === null || typeof error.statusCode !== 'number' || error.statusCode < 400 || error.statusCode > 599) {
    return { kind: 'invalid', message: 'the batch reply has an error for this item without a statusCode in 400-599' };
  }
  return { kind: 'error', error: { statusCode: error.statusCode, code: String(error.code ?? ''), message: String(error.message ?? '') } };
}

function jsonItemOutcome(object: Record<string, unknown>): BatchItemOutcome {
  if (object.error !== undefined) return itemError(object.error);
  if (object.response === undefined) return { kind: 'invalid', message: 'the batch reply item has neither response nor error' };
  return { kind: 'response', value: object.response };
}

function eventItemOutcome(event: Record<string, unknown>): BatchItemOutcome {
  if (event.type === CLOUDEVENT_ERROR_TYPE) return itemError(event.data);
  if (event.type !== CLOUDEVENT_RESPONSE_TYPE) return { kind: 'invalid', message: `the batch reply event has type ${JSON.stringify(event.type)}; want ${CLOUDEVENT_RESPONSE_TYPE} or ${CLOUDEVENT_ERROR_TYPE}` };
  return { kind: 'response', value: event.data };
}
