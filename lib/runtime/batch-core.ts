// A batch of ReconcileRequests in one HTTP request (plain JSON or a CloudEvents batch): each item is
// accepted, called and checked on its own, with its own span, log line and metrics, and a failure of one
// item (bad request, a throw, a bad reply) is that item's error in the reply, never the others'.
import { context as otelContext, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { withFunctionSpan } from '../observability/function-span.ts';
import { decodeBatchRequest, encodeBatchReply, type BatchFormat, type BatchItemReply } from '../contract/batch.ts';
import { contextFromHeaders, startServerSpan } from '../observability/trace-context.ts';
import { decodeStructuredEvent } from './cloudevents.ts';
import { acceptRequest, callFunction, recordError, RequestError, type CallSinks } from './core-steps.ts';
import type { AnyFunctionDefinition, FunctionKind } from './function-kinds.ts';
import type { CoreReply } from './http-replies.ts';

export interface BatchContext {
  definition: AnyFunctionDefinition;
  kind: FunctionKind;
  sinks: CallSinks;
  /** The HTTP request's trace context: the parent of items that carry none of their own. */
  parent: Context;
}

/** The 200 reply to a well-formed batch; a malformed batch (not a list, no ids, repeated ids) throws a 400. */
export function handleBatch(at: BatchContext, format: BatchFormat, body: unknown): CoreReply {
  const decoded = decodeBatchRequest(format, body);
  if (!decoded.ok) throw new RequestError(400, decoded.code, decoded.message);
  const replies = decoded.items.map((item) => answerItem(at, format, item));
  const encoded = encodeBatchReply(format, at.definition.name, replies);
  return { status: 200, headers: { 'content-type': encoded.contentType }, body: encoded.body };
}

function answerItem(at: BatchContext, format: BatchFormat, item: { id: string; value: unknown; traceparent?: string; tracestate?: string }): BatchItemReply {
  const parent = item.traceparent ? contextFromHeaders({ traceparent: item.traceparent, tracestate: item.tracestate }) : at.parent;
  const span = startServerSpan(`function ${at.definition.name}`, parent);
  span.setAttribute('kubeloop.reconcile_id', item.id);
  const started = performance.now();
  let context: Record<string, unknown> = {};
  try {
    let value = item.value;
    if (format === 'cloudevents') {
      const event = decodeStructuredEvent(value);
      if (!event.ok) throw new RequestError(400, 'InvalidCloudEvent', event.message);
      value = event.data;
    }
    const accepted = acceptRequest(at.kind, value);
    context = accepted.context;
    // As for a single call: the function's traceEvent/traceAttributes land on the item's own span.
    const call = () => callFunction(at.kind, at.definition.name, accepted.request);
    const { response } = span.isRecording() ? withFunctionSpan(span, () => otelContext.with(trace.setSpan(parent, span), call)) : call();
    at.sinks.metrics.observe(200, (performance.now() - started) / 1000);
    return { id: item.id, response };
  } catch (error) {
    const failure = error instanceof RequestError ? error : new RequestError(500, 'FunctionError', `unexpected failure: ${String(error)}`, error);
    recordError(at.sinks, started, failure, item.id, context);
    if (failure.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    return { id: item.id, error: { statusCode: failure.status, code: failure.code, message: failure.message } };
  } finally {
    span.end();
  }
}
