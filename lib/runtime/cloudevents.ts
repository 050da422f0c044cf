// The CloudEvents HTTP binding of the contract: a ReconcileRequest arrives as the data of a
// dev.kubeloop.reconcile.v1 event (binary or structured mode); the reply goes back in the same mode.
import { CloudEvent, HTTP, type Headers as CloudEventHeaders } from 'cloudevents';
import { CLOUDEVENT_RESPONSE_TYPE, CLOUDEVENT_TYPE } from '../contract/types.ts';

export type CloudEventMode = 'binary' | 'structured';

export type DecodedEvent = { ok: true; data: unknown; id: string } | { ok: false; message: string };

/**
 * Decodes an HTTP message already known to be a CloudEvent. The SDK is lenient about required
 * attributes, so they are checked here and every failure says which attribute is wrong.
 */
export function decodeReconcileEvent(headers: CloudEventHeaders, body: string): DecodedEvent {
  const missing = missingRequiredAttribute(headers, body);
  if (missing) return { ok: false, message: missing };
  let event: CloudEvent<unknown>;
  try {
    const decoded = HTTP.toEvent({ headers, body });
    if (Array.isArray(decoded)) return { ok: false, message: 'CloudEvent batches are not supported; send one event per request' };
    event = decoded as CloudEvent<unknown>;
  } catch (error) {
    return { ok: false, message: `not a valid CloudEvent: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (event.specversion !== '1.0') return { ok: false, message: `CloudEvent specversion "${String(event.specversion)}" is not supported; want "1.0"` };
  if (event.type !== CLOUDEVENT_TYPE) {
    return { ok: false, message: `CloudEvent type "${event.type}" is not accepted; want "${CLOUDEVENT_TYPE}"` };
  }
  const contentType: unknown = event.datacontenttype;
  if (contentType !== undefined && (typeof contentType !== 'string' || !contentType.startsWith('application/json'))) {
    return { ok: false, message: `CloudEvent datacontenttype ${JSON.stringify(contentType)} is not supported; want "application/json"` };
  }
  if (event.data === undefined) return { ok: false, message: 'CloudEvent has no data; want a ReconcileRequest' };
  return { ok: true, data: event.data, id: event.id };
}

/**
 * The SDK invents an id (and tolerates other gaps) when an attribute is absent, so required attributes
 * are checked on the message as received: ce-* headers in binary mode, top-level members in structured mode.
 */
function missingRequiredAttribute(headers: CloudEventHeaders, body: string): string | undefined {
  let attributes: Record<string, unknown>;
  if (headers['ce-specversion'] !== undefined) {
    attributes = { id: headers['ce-id'], source: headers['ce-source'], type: headers['ce-type'] };
  } else {
    try {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'a structured-mode CloudEvent must be a JSON object';
      attributes = parsed as Record<string, unknown>;
    } catch (error) {
      return `not a valid CloudEvent: the body is not JSON (${(error as Error).message})`;
    }
  }
  for (const name of ['id', 'source', 'type']) {
    const value = attributes[name];
    if (typeof value !== 'string' || value === '') return `CloudEvent attribute "${name}" is missing`;
  }
  return undefined;
}

/** The reply event: same mode as the request, type dev.kubeloop.reconcile.response.v1. */
export function encodeResponseEvent(
  mode: CloudEventMode,
  functionName: string,
  reconcileId: string,
  response: unknown,
): { headers: Record<string, string>; body: string } {
  const event = new CloudEvent({
    specversion: '1.0',
    id: reconcileId,
    source: `/kubeloop/functions/${functionName}`,
    type: CLOUDEVENT_RESPONSE_TYPE,
    datacontenttype: 'application/json',
    data: response,
  });
  const message = mode === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return { headers, body: typeof message.body === 'string' ? message.body : JSON.stringify(message.body) };
}
