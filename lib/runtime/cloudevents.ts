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
  let event: CloudEvent<unknown>;
  try {
    const decoded = HTTP.toEvent({ headers, body });
    if (Array.isArray(decoded)) return { ok: false, message: 'CloudEvent batches are not supported; send one event per request' };
    event = decoded as CloudEvent<unknown>;
  } catch (error) {
    return { ok: false, message: `not a valid CloudEvent: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (event.specversion !== '1.0') return { ok: false, message: `CloudEvent specversion "${String(event.specversion)}" is not supported; want "1.0"` };
  for (const attribute of ['id', 'source', 'type'] as const) {
    if (typeof event[attribute] !== 'string' || event[attribute] === '') {
      return { ok: false, message: `CloudEvent attribute "${attribute}" is missing` };
    }
  }
  if (event.type !== CLOUDEVENT_TYPE) {
    return { ok: false, message: `CloudEvent type "${event.type}" is not accepted; want "${CLOUDEVENT_TYPE}"` };
  }
  if (event.datacontenttype !== undefined && !event.datacontenttype.startsWith('application/json')) {
    return { ok: false, message: `CloudEvent datacontenttype "${event.datacontenttype}" is not supported; want "application/json"` };
  }
  if (event.data === undefined) return { ok: false, message: 'CloudEvent has no data; want a ReconcileRequest' };
  return { ok: true, data: event.data, id: event.id };
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
