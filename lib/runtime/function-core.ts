// The one request path every transport shares (fastify, Web fetch, Node http): content negotiation,
// CloudEvents decoding, request validation, the reconcile call, reply validation and serialization.
// Web-platform globals only (crypto.randomUUID, performance.now) and no fastify, pino or prom-client at
// run time: the fetch handler runs this where Node is absent (Workers, Deno, Bun).
import { context as otelContext, INVALID_SPAN_CONTEXT, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { ReconcileResponse } from '../contract/types.ts';
import { withFunctionSpan } from '../observability/function-span.ts';
import { contextFromHeaders, recordedTraceId, startServerSpan } from '../observability/trace-context.ts';
import { checkJsonBudget } from '../function-client/json-value-budget.ts';
import { decodeReconcileEvent, encodeResponseEvent, type CloudEventMode } from './cloudevents.ts';
import { BATCH_MAX_HEADER, CLOUDEVENT_BATCH_MEDIA_TYPE, isJsonBatch, MAX_BATCH_ITEMS } from '../contract/batch.ts';
import { handleBatch } from './batch-core.ts';
import type { FunctionMetrics } from './function-metrics.ts';
import { functionKindOf, type AnyFunctionDefinition, type FunctionKind } from './function-kinds.ts';
import type { CoreReply } from './http-replies.ts';
import { acceptRequest, callFunction, recordError, RequestError, type CallSinks, type CoreLogger, type FunctionErrorCode } from './core-steps.ts';

export type { CoreLogger, FunctionErrorCode } from './core-steps.ts';

export const RECONCILE_ID_HEADER = 'x-kubeloop-reconcile-id';
const RECONCILE_ID_PATTERN = /^[!-~]{1,128}$/;

/** Lower-case header names, as Node's IncomingMessage.headers has them. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

export interface CoreRequest {
  headers: RequestHeaders;
  /** The raw body, already limited to the configured size by the transport. */
  body: string;
}

export interface FunctionErrorReply {
  statusCode: number;
  code: FunctionErrorCode;
  message: string;
  reconcileId: string;
}

export interface FunctionCoreOptions {
  logger: CoreLogger;
  /** Where calls are counted (function-metrics.ts on a prom-client registry); not counted when omitted. */
  metrics?: FunctionMetrics;
}

const NO_METRICS: FunctionMetrics = { observe() {}, error() {} };

const randomUUID = (): string => crypto.randomUUID();

export interface FunctionCore {
  readonly name: string;
  /** The paths it answers POSTs on: / and /reconcile, or / and /admit. */
  readonly paths: readonly string[];
  /** "ReconcileRequest" or "AdmissionRequest". */
  readonly requestKind: string;
  handle(request: CoreRequest): CoreReply;
  /** A rejection decided by the transport before the core saw the body (413, 415), logged and counted alike. */
  reject(status: number, code: FunctionErrorCode, message: string, headers: RequestHeaders): CoreReply;
}

function firstHeader(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function mediaType(headers: RequestHeaders): string {
  const value = firstHeader(headers, 'content-type') ?? '';
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

function headerReconcileId(headers: RequestHeaders): string | undefined {
  const value = firstHeader(headers, RECONCILE_ID_HEADER);
  return value !== undefined && RECONCILE_ID_PATTERN.test(value) ? value : undefined;
}

type Mode = 'json' | CloudEventMode | 'cloudevents-batch';

/** Which of the three accepted encodings a request uses, or a 415 message. */
function modeOf(headers: RequestHeaders): Mode | { unsupported: string } {
  const type = mediaType(headers);
  if (type === 'application/cloudevents+json') return 'structured';
  if (type === CLOUDEVENT_BATCH_MEDIA_TYPE) return 'cloudevents-batch';
  if (type === 'application/json') return firstHeader(headers, 'ce-specversion') === undefined ? 'json' : 'binary';
  const shown = type === '' ? 'no content type' : `content type "${type}"`;
  return { unsupported: `${shown} is not supported; send application/json, or a CloudEvent in binary mode (ce-* headers, application/json) or structured mode (application/cloudevents+json)` };
}

/** Logs and counts a failed call, and renders its JSON error body. */
function errorReply(sinks: CallSinks, started: number, error: RequestError, reconcileId: string, context: Record<string, unknown>): CoreReply {
  const body: FunctionErrorReply = { statusCode: error.status, code: error.code, message: error.message, reconcileId };
  recordError(sinks, started, error, reconcileId, context);
  return {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8', [RECONCILE_ID_HEADER]: reconcileId },
    body: JSON.stringify(body),
  };
}

/** The request body as a value: plain JSON (one request or a batch), the data of a CloudEvent, or a CloudEvents batch. */
function parseBody(kind: FunctionKind, request: CoreRequest, mode: Mode): unknown {
  if (request.body.length === 0) throw new RequestError(400, 'InvalidJSON', `request body is empty; want a ${kind.requestKind}`);
  // Counted before JSON.parse: 8 MiB of `{}` would build four million objects on this function's heap.
  const budget = checkJsonBudget(request.body);
  if (!budget.ok) throw new RequestError(413, 'PayloadTooLarge', `request body ${budget.message}; refused before parsing`);
  if (mode === 'cloudevents-batch') {
    if (!kind.cloudEvents) throw new RequestError(415, 'UnsupportedMediaType', `an admission function takes one plain JSON ${kind.requestKind} per call, not a CloudEvents batch`);
    try {
      return JSON.parse(request.body) as unknown;
    } catch (error) {
      throw new RequestError(400, 'InvalidCloudEvent', `not a valid CloudEvents batch: the body is not JSON (${(error as Error).message})`);
    }
  }
  if (mode !== 'json') {
    if (!kind.cloudEvents) throw new RequestError(415, 'UnsupportedMediaType', `an admission function takes a plain JSON ${kind.requestKind} (content-type application/json), not a CloudEvent`);
    const decoded = decodeReconcileEvent(request.headers, request.body);
    if (!decoded.ok) throw new RequestError(400, 'InvalidCloudEvent', decoded.message);
    return decoded.data;
  }
  try {
    return JSON.parse(request.body) as unknown;
  } catch (error) {
    throw new RequestError(400, 'InvalidJSON', `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The response in the request's encoding: plain JSON, or a CloudEvent in the same mode. */
function encodeResponse(mode: Exclude<Mode, 'cloudevents-batch'>, name: string, reconcileId: string, response: unknown): { headers: Record<string, string>; body: string } {
  const encoded =
    mode === 'json'
      ? { headers: { 'content-type': 'application/json; charset=utf-8', [RECONCILE_ID_HEADER]: reconcileId }, body: JSON.stringify(response) }
      : encodeResponseEvent(mode, name, reconcileId, response as ReconcileResponse);
  encoded.headers[RECONCILE_ID_HEADER] = reconcileId;
  return encoded;
}

/** One request end to end; every failure becomes an error reply, never a throw. */
function handleRequest(definition: AnyFunctionDefinition, kind: FunctionKind, sinks: CallSinks, request: CoreRequest): CoreReply {
  // The caller's span (the router's call, the gateway's) is the parent; a CloudEvent's ce-traceparent counts too.
  const parent = contextFromHeaders(traceCarrier(request.headers));
  // A CloudEvents batch has no span of its own: each item's span is a child of its own event's traceparent.
  const span = mediaType(request.headers) === CLOUDEVENT_BATCH_MEDIA_TYPE ? trace.wrapSpanContext(INVALID_SPAN_CONTEXT) : startServerSpan(`function ${definition.name}`, parent);
  try {
    const reply = handleTraced(definition, kind, sinks, request, span, parent);
    span.setAttribute('http.response.status_code', reply.status);
    if (reply.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    return reply;
  } finally {
    span.end();
  }
}

/** traceparent/tracestate, or the CloudEvents Distributed Tracing extension's ce-traceparent/ce-tracestate. */
function traceCarrier(headers: RequestHeaders): RequestHeaders {
  if (headers.traceparent !== undefined || headers['ce-traceparent'] === undefined) return headers;
  return { traceparent: headers['ce-traceparent'], tracestate: headers['ce-tracestate'] };
}

function handleTraced(definition: AnyFunctionDefinition, kind: FunctionKind, sinks: CallSinks, request: CoreRequest, span: Span, parent: Context): CoreReply {
  const started = performance.now();
  let reconcileId = headerReconcileId(request.headers);
  let context: Record<string, unknown> = {};
  try {
    const mode = modeOf(request.headers);
    if (typeof mode === 'object') throw new RequestError(415, 'UnsupportedMediaType', mode.unsupported);
    const body = parseBody(kind, request, mode);
    if (mode === 'cloudevents-batch' || (mode === 'json' && isJsonBatch(body))) {
      if (!kind.cloudEvents) throw new RequestError(400, 'InvalidRequest', `an admission function takes one ${kind.requestKind} per call, not a batch`);
      return handleBatch({ definition, kind, sinks, parent }, mode === 'json' ? 'json' : 'cloudevents', body);
    }
    const accepted = acceptRequest(kind, body);
    reconcileId = accepted.id ?? reconcileId ?? randomUUID();
    context = accepted.context;
    const traceId = recordedTraceId(span);
    if (traceId !== undefined) {
      context = { ...context, traceId };
      span.setAttribute('kubeloop.reconcile_id', reconcileId);
    }
    // An unsampled call (most, at a low ratio) skips the context switch: nothing would record what it sees.
    const call = () => callFunction(kind, definition.name, accepted.request);
    const { response, summary } = span.isRecording() ? withFunctionSpan(span, () => otelContext.with(trace.setSpan(parent, span), call)) : call();
    const encoded = encodeResponse(mode, definition.name, reconcileId, response);
    if (kind.cloudEvents) encoded.headers[BATCH_MAX_HEADER] = String(MAX_BATCH_ITEMS);
    const seconds = (performance.now() - started) / 1000;
    sinks.metrics.observe(200, seconds);
    if (sinks.log.isLevelEnabled('debug')) {
      sinks.log.debug({ ...context, reconcileId, ...summary, durationMs: seconds * 1000 }, kind.requestKind === 'AdmissionRequest' ? 'admitted' : 'reconciled');
    }
    return { status: 200, headers: encoded.headers, body: encoded.body };
  } catch (error) {
    const requestError =
      error instanceof RequestError ? error : new RequestError(500, 'FunctionError', `unexpected failure: ${String(error)}`, error);
    return errorReply(sinks, started, requestError, reconcileId ?? randomUUID(), context);
  }
}

export function createFunctionCore(definition: AnyFunctionDefinition, options: FunctionCoreOptions): FunctionCore {
  const kind: FunctionKind = functionKindOf(definition);
  const sinks: CallSinks = { log: options.logger, metrics: options.metrics ?? NO_METRICS };
  return {
    name: definition.name,
    paths: kind.paths,
    requestKind: kind.requestKind,
    handle: (request) => handleRequest(definition, kind, sinks, request),
    reject(status, code, message, headers) {
      return errorReply(sinks, performance.now(), new RequestError(status, code, message), headerReconcileId(headers) ?? randomUUID(), {});
    },
  };
}
