// The CloudEvents HTTP binding of the contract (spec 1.0): a ReconcileRequest arrives as the JSON data of a
// dev.kubeloop.reconcile.v1 event (binary or structured mode); the reply goes back in the same mode. Plain
// code on purpose: the cloudevents SDK needs Node (util, process, its http transport), and this runs in
// the Web fetch handler too (Workers, Deno, Bun).
import { CLOUDEVENT_RESPONSE_TYPE, CLOUDEVENT_TYPE } from '../contract/types.ts';

export type CloudEventMode = 'binary' | 'structured';

export type DecodedEvent = { ok: true; data: unknown; id: string } | { ok: false; message: string };

/** Lower-case header names; a repeated header counts by its first value. */
export type CloudEventHeaders = Record<string, string | string[] | undefined>;

const REQUIRED = ['id', 'source', 'type'] as const;

function header(headers: CloudEventHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function invalid(message: string): DecodedEvent {
  return { ok: false, message };
}

/** The context attributes and data of an HTTP message already known to be a CloudEvent. */
function readMessage(headers: CloudEventHeaders, body: string): { attributes: Record<string, unknown>; data: () => unknown } | string {
  if (header(headers, 'ce-specversion') !== undefined) {
    const attributes: Record<string, unknown> = { datacontenttype: header(headers, 'content-type') };
    for (const name of ['specversion', ...REQUIRED]) attributes[name] = header(headers, `ce-${name}`);
    return { attributes, data: () => (body === '' ? undefined : (JSON.parse(body) as unknown)) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return `not a valid CloudEvent: the body is not JSON (${(error as Error).message})`;
  }
  if (Array.isArray(parsed)) return 'CloudEvent batches are not supported; send one event per request';
  if (typeof parsed !== 'object' || parsed === null) return 'a structured-mode CloudEvent must be a JSON object';
  const event = parsed as Record<string, unknown>;
  if (event.data_base64 !== undefined) return 'CloudEvent data_base64 is not supported; send the ReconcileRequest as JSON data';
  return { attributes: event, data: () => event.data };
}

/** Decodes a CloudEvent carrying a ReconcileRequest; every failure says which attribute is wrong. */
export function decodeReconcileEvent(headers: CloudEventHeaders, body: string): DecodedEvent {
  const message = readMessage(headers, body);
  if (typeof message === 'string') return invalid(message);
  return checkEvent(message);
}

/** One structured-mode event of a CloudEvents batch (already parsed), checked as decodeReconcileEvent checks one. */
export function decodeStructuredEvent(value: unknown): DecodedEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('a batch item must be a structured-mode CloudEvent (a JSON object)');
  const event = value as Record<string, unknown>;
  if (event.data_base64 !== undefined) return invalid('CloudEvent data_base64 is not supported; send the ReconcileRequest as JSON data');
  return checkEvent({ attributes: event, data: () => event.data });
}

function checkEvent(message: { attributes: Record<string, unknown>; data: () => unknown }): DecodedEvent {
  const { attributes } = message;
  for (const name of REQUIRED) {
    const value = attributes[name];
    if (typeof value !== 'string' || value === '') return invalid(`CloudEvent attribute "${name}" is missing`);
  }
  if (attributes.specversion !== '1.0') return invalid(`CloudEvent specversion "${String(attributes.specversion)}" is not supported; want "1.0"`);
  if (attributes.type !== CLOUDEVENT_TYPE) return invalid(`CloudEvent type "${String(attributes.type)}" is not accepted; want "${CLOUDEVENT_TYPE}"`);
  const contentType = attributes.datacontenttype;
  if (contentType !== undefined && (typeof contentType !== 'string' || !contentType.startsWith('application/json'))) {
    return invalid(`CloudEvent datacontenttype ${JSON.stringify(contentType)} is not supported; want "application/json"`);
  }
  let data: unknown;
  try {
    data = message.data();
  } catch (error) {
    return invalid(`not a valid CloudEvent: its data is not JSON (${(error as Error).message})`);
  }
  if (data === undefined) return invalid('CloudEvent has no data; want a ReconcileRequest');
  return { ok: true, data, id: attributes.id as string };
}

/** The reply event: same mode as the request, type dev.kubeloop.reconcile.response.v1. */
export function encodeResponseEvent(
  mode: CloudEventMode,
  functionName: string,
  reconcileId: string,
  response: unknown,
): { headers: Record<string, string>; body: string } {
  const attributes = {
    specversion: '1.0',
    id: reconcileId,
    source: `/kubeloop/functions/${functionName}`,
    type: CLOUDEVENT_RESPONSE_TYPE,
    time: new Date().toISOString(),
  };
  if (mode === 'structured') {
    return {
      headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
      body: JSON.stringify({ ...attributes, datacontenttype: 'application/json', data: response }),
    };
  }
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  for (const [name, value] of Object.entries(attributes)) headers[`ce-${name}`] = value;
  return { headers, body: JSON.stringify(response) };
}
