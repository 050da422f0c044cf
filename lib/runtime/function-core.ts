// The one request path every transport shares (fastify, Web fetch, Node http): content negotiation,
// CloudEvents decoding, request validation, the reconcile call, reply validation and serialization.
// Web-platform globals only (crypto.randomUUID, performance.now) and no fastify, pino or prom-client at
// run time: the fetch handler runs this where Node is absent (Workers, Deno, Bun).
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { ReconcileResponse } from '../contract/types.ts';
import { withFunctionSpan } from '../observability/function-span.ts';
import { contextFromHeaders, recordedTraceId, tracer } from '../observability/trace-context.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../contract/json-depth.ts';
import { checkJsonBudget } from '../function-client/json-value-budget.ts';
import { decodeReconcileEvent, encodeResponseEvent, type CloudEventMode } from './cloudevents.ts';
import type { FunctionMetrics } from './function-metrics.ts';
import { apiVersionProblem, functionKindOf, type AnyFunctionDefinition, type FunctionKind } from './function-kinds.ts';
import type { CoreReply } from './http-replies.ts';

export const RECONCILE_ID_HEADER = 'x-kubeloop-reconcile-id';
const RECONCILE_ID_PATTERN = /^[!-~]{1,128}$/;

/** Lower-case header names, as Node's IncomingMessage.headers has them. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

export interface CoreRequest {
  headers: RequestHeaders;
  /** The raw body, already limited to the configured size by the transport. */
  body: string;
}

/** Stable codes in error replies and the kubeloop_function_errors_total metric. */
export type FunctionErrorCode =
  | 'UnsupportedMediaType'
  | 'InvalidJSON'
  | 'InvalidCloudEvent'
  | 'UnsupportedApiVersion'
  | 'InvalidRequest'
  | 'PayloadTooLarge'
  | 'InvalidSignature'
  | 'FunctionError'
  | 'InvalidResponse';

export interface FunctionErrorReply {
  statusCode: number;
  code: FunctionErrorCode;
  message: string;
  reconcileId: string;
}

/** What the core logs through: a pino Logger fits, and so does consoleLogger (console-logger.ts). */
export interface CoreLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  isLevelEnabled(level: string): boolean;
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

type Mode = 'json' | CloudEventMode;

/** Which of the three accepted encodings a request uses, or a 415 message. */
function modeOf(headers: RequestHeaders): Mode | { unsupported: string } {
  const type = mediaType(headers);
  if (type === 'application/cloudevents+json') return 'structured';
  if (type === 'application/cloudevents-batch+json') return { unsupported: 'CloudEvent batches are not supported; send one event per request' };
  if (type === 'application/json') return firstHeader(headers, 'ce-specversion') === undefined ? 'json' : 'binary';
  const shown = type === '' ? 'no content type' : `content type "${type}"`;
  return { unsupported: `${shown} is not supported; send application/json, or a CloudEvent in binary mode (ce-* headers, application/json) or structured mode (application/cloudevents+json)` };
}

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: FunctionErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** Where one call's outcome goes: the log and the metrics. */
interface CallSinks {
  log: CoreLogger;
  metrics: FunctionMetrics;
}

/** Logs and counts a failed call, and renders its JSON error body. */
function errorReply(sinks: CallSinks, started: number, error: RequestError, reconcileId: string, context: Record<string, unknown>): CoreReply {
  const body: FunctionErrorReply = { statusCode: error.status, code: error.code, message: error.message, reconcileId };
  const fields = { ...context, reconcileId, code: error.code, statusCode: error.status };
  if (error.status >= 500) sinks.log.error({ ...fields, err: error.cause ?? error }, error.message);
  else sinks.log.warn(fields, error.message);
  sinks.metrics.error(error.code);
  sinks.metrics.observe(error.status, (performance.now() - started) / 1000);
  return {
    status: error.status,
    headers: { 'content-type': 'application/json; charset=utf-8', [RECONCILE_ID_HEADER]: reconcileId },
    body: JSON.stringify(body),
  };
}

/** The request body as a value: plain JSON, or the data of a CloudEvent. */
function parseBody(kind: FunctionKind, request: CoreRequest, mode: Mode): unknown {
  if (request.body.length === 0) throw new RequestError(400, 'InvalidJSON', `request body is empty; want a ${kind.requestKind}`);
  // Counted before JSON.parse: 8 MiB of `{}` would build four million objects on this function's heap.
  const budget = checkJsonBudget(request.body);
  if (!budget.ok) throw new RequestError(413, 'PayloadTooLarge', `request body ${budget.message}; refused before parsing`);
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

/** Checks the parsed request: contract version, nesting depth, then the kind's own validation. */
function acceptRequest(kind: FunctionKind, value: unknown) {
  const versionProblem = apiVersionProblem(value);
  if (versionProblem) throw new RequestError(400, 'UnsupportedApiVersion', versionProblem);
  if (nestsDeeperThan(value)) throw new RequestError(400, 'InvalidRequest', `request nests deeper than ${MAX_JSON_DEPTH} levels`);
  const checked = kind.accept(value);
  if (!checked.ok) throw new RequestError(400, 'InvalidRequest', checked.message);
  return checked.value;
}

/** Calls the user's function and checks what it returned. */
function callFunction(kind: FunctionKind, name: string, request: unknown) {
  let response: unknown;
  try {
    response = kind.call(request);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RequestError(500, 'FunctionError', `function ${name} threw: ${reason}`, error);
  }
  if (typeof (response as { then?: unknown } | undefined)?.then === 'function') {
    throw new RequestError(500, 'InvalidResponse', `function ${name} returned a Promise; functions are synchronous (no I/O)`);
  }
  const checked = kind.check(response);
  if (!checked.ok) throw new RequestError(500, 'InvalidResponse', `function ${name} returned an ${checked.message}`);
  return checked.value;
}

/** The response in the request's encoding: plain JSON, or a CloudEvent in the same mode. */
function encodeResponse(mode: Mode, name: string, reconcileId: string, response: unknown): { headers: Record<string, string>; body: string } {
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
  const span = tracer().startSpan(`function ${definition.name}`, { kind: SpanKind.SERVER }, parent);
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
    const accepted = acceptRequest(kind, parseBody(kind, request, mode));
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
