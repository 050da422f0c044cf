// The cases every kubeloop function must handle, whatever its language (docs/contract.md, "Transport" and
// "Signed calls"): status codes and error codes for bad input, the three encodings (plain JSON, CloudEvents
// binary and structured) with the reply event, probes, and, with a signing key, the refusals (unsigned) of
// forged, stale, replayed, wrongly keyed and other-audience signatures, and the reply signed with the reply
// key. Each case sends one request and says what came back.
import { randomUUID } from 'node:crypto';
import type { AdmissionRequest } from '../../lib/contract/admission-types.ts';
import { CLOUDEVENT_RESPONSE_TYPE, CLOUDEVENT_TYPE, type ReconcileRequest } from '../../lib/contract/types.ts';
import { validateAdmissionResponse, validateReconcileResponse } from '../../lib/contract/validate.ts';
import { AUDIENCE_HEADER, directionKeys, generateSigningSecret, parseSigningSecrets, signatureHeaders, signRequest } from '../../lib/signing/webhook-signature.ts';
import { CaseFailure, expectError, expectSuccess, expectUnsigned, header, parseJson, send, type CallTarget, type Exchange } from './http-call.ts';

export type CaseGroup = 'transport' | 'cloudevents' | 'signing';

export interface ConformanceContext extends CallTarget {
  /** A request the function answers with 200 (the first fixture's, or a plain Pod). */
  sample: ReconcileRequest | AdmissionRequest;
  bodyLimitBytes: number;
}

export interface ConformanceCase {
  group: CaseGroup;
  name: string;
  /** Runs the case; returns a one-line note on success, throws CaseFailure otherwise. */
  run(context: ConformanceContext): Promise<string>;
  /** Why the case does not apply to this function, if it does not. */
  skip?(context: ConformanceContext): string | undefined;
}

/**
 * What a function answers 200 to when no fixture is given: for a URL ending in /admit an AdmissionRequest
 * creating a plain Pod, otherwise a ReconcileRequest for one (nothing to do, for most functions).
 */
export function defaultSampleRequest(url: string): ReconcileRequest | AdmissionRequest {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'conformance-0', namespace: 'default', uid: 'u-conformance', resourceVersion: '1' } };
  if (new URL(url).pathname.endsWith('/admit')) {
    return {
      apiVersion: 'kubeloop.dev/v1',
      kind: 'AdmissionRequest',
      hook: 'conformance',
      uid: 'u-conformance',
      operation: 'CREATE',
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'conformance-0',
      namespace: 'default',
      object: pod,
      userInfo: { username: 'conformance' },
      dryRun: false,
      context: {},
      now: '2026-11-22T10:00:00Z',
    };
  }
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'ReconcileRequest',
    loop: 'conformance',
    trigger: { type: 'MODIFIED' },
    object: pod,
    children: {},
    now: '2026-11-22T10:00:00Z',
  };
}

const JSON_TYPE = { 'content-type': 'application/json' };
const isAdmission = (context: ConformanceContext): boolean => context.sample.kind === 'AdmissionRequest';

/** The sample with a fresh correlation id, so a reply's id can be checked against it. */
function freshSample(context: ConformanceContext): { body: string; id: string } {
  const id = `conformance-${randomUUID()}`;
  const sample = isAdmission(context) ? { ...context.sample, uid: id } : { ...context.sample, reconcileId: id };
  return { body: JSON.stringify(sample), id };
}

function checkResponse(context: ConformanceContext, value: unknown, what: string): void {
  const checked = isAdmission(context) ? validateAdmissionResponse(value) : validateReconcileResponse(value);
  if (!checked.ok) throw new CaseFailure(`${what} is not a valid ${isAdmission(context) ? 'AdmissionResponse' : 'ReconcileResponse'}: ${checked.errors.join('; ')}`);
}

function expectIdEcho(exchange: Exchange, id: string): void {
  const echoed = header(exchange, 'x-kubeloop-reconcile-id');
  if (echoed !== id) throw new CaseFailure(`want x-kubeloop-reconcile-id ${id} echoed, got ${echoed === undefined ? 'none' : echoed}`);
}

function binaryHeaders(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const headers: Record<string, string | undefined> = { ...JSON_TYPE, 'ce-specversion': '1.0', 'ce-id': randomUUID(), 'ce-source': '/kubeloop/conformance', 'ce-type': CLOUDEVENT_TYPE, ...overrides };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

const structured = (data: string, type = CLOUDEVENT_TYPE): string =>
  `{"specversion":"1.0","id":"${randomUUID()}","source":"/kubeloop/conformance","type":"${type}","datacontenttype":"application/json","data":${data}}`;

/** Admission functions take plain JSON only: every CloudEvent is a 415 there. */
const admissionRefusesEvents = async (context: ConformanceContext, headers: Record<string, string>, body: string): Promise<string> =>
  expectError(await send(context, { headers, body }), 415, ['UnsupportedMediaType']);

const transportCases: ConformanceCase[] = [
  {
    group: 'transport',
    name: 'plain JSON request: 200, a valid reply, the id echoed',
    async run(context) {
      const { body, id } = freshSample(context);
      const exchange = await send(context, { headers: JSON_TYPE, body });
      expectSuccess(context, exchange);
      checkResponse(context, parseJson(exchange, 'the reply'), 'the reply');
      expectIdEcho(exchange, id);
      return '200';
    },
  },
  {
    group: 'transport',
    name: '415 for a content type that is not JSON',
    run: async (context) => expectError(await send(context, { headers: { 'content-type': 'text/plain' }, body: 'hello' }), 415, ['UnsupportedMediaType']),
  },
  {
    group: 'transport',
    name: '400 for a body that is not JSON',
    run: async (context) => expectError(await send(context, { headers: JSON_TYPE, body: '{"apiVersion": "kubeloop.dev/v1",' }), 400, ['InvalidJSON']),
  },
  {
    group: 'transport',
    name: '400 for an empty body',
    run: async (context) => expectError(await send(context, { headers: JSON_TYPE, body: '' }), 400, ['InvalidJSON']),
  },
  {
    group: 'transport',
    name: '400 for a request that breaks the contract schema',
    async run(context) {
      const { apiVersion, kind } = context.sample;
      return expectError(await send(context, { headers: JSON_TYPE, body: JSON.stringify({ apiVersion, kind }) }), 400, ['InvalidRequest']);
    },
  },
  {
    group: 'transport',
    name: '400 for another contract version',
    async run(context) {
      const body = JSON.stringify({ ...context.sample, apiVersion: 'kubeloop.dev/v999' });
      return expectError(await send(context, { headers: JSON_TYPE, body }), 400, ['UnsupportedApiVersion']);
    },
  },
  {
    group: 'transport',
    name: '413 for a body over the limit',
    async run(context) {
      // Valid JSON, one byte over: only the size is wrong.
      const padding = 'x'.repeat(Math.max(0, context.bodyLimitBytes + 1 - 10));
      return expectError(await send(context, { headers: JSON_TYPE, body: `{"pad":"${padding}"}` }), 413, ['PayloadTooLarge']);
    },
  },
  {
    group: 'transport',
    name: '405 for GET on the function path',
    run: async (context) => expectError(await send(context, { method: 'GET' }), 405, ['MethodNotAllowed'], { reconcileIdHeader: false }),
  },
  ...(['/healthz', '/readyz'] as const).map(
    (path): ConformanceCase => ({
      group: 'transport',
      name: `GET ${path} answers 200 (the chart's ${path === '/healthz' ? 'liveness' : 'readiness'} probe)`,
      async run(context) {
        const exchange = await send(context, { method: 'GET', path });
        if (exchange.status !== 200) throw new CaseFailure(`want 200, got HTTP ${exchange.status}: ${exchange.text.slice(0, 200)}`);
        return '200';
      },
    }),
  ),
];

const cloudEventCases: ConformanceCase[] = [
  {
    group: 'cloudevents',
    name: 'binary mode: 200, the reply a binary-mode dev.kubeloop.reconcile.response.v1 event (admission: 415)',
    async run(context) {
      const { body, id } = freshSample(context);
      if (isAdmission(context)) return admissionRefusesEvents(context, binaryHeaders(), body);
      const exchange = await send(context, { headers: binaryHeaders(), body });
      expectSuccess(context, exchange);
      const attributes = { specversion: header(exchange, 'ce-specversion'), type: header(exchange, 'ce-type'), id: header(exchange, 'ce-id'), source: header(exchange, 'ce-source') };
      expectReplyEvent(attributes, id);
      checkResponse(context, parseJson(exchange, 'the reply'), 'the reply');
      expectIdEcho(exchange, id);
      return `200, ce-type ${attributes.type}`;
    },
  },
  {
    group: 'cloudevents',
    name: 'structured mode: 200, the reply a structured-mode response event (admission: 415)',
    async run(context) {
      const { body, id } = freshSample(context);
      const headers = { 'content-type': 'application/cloudevents+json' };
      if (isAdmission(context)) return admissionRefusesEvents(context, headers, structured(body));
      const exchange = await send(context, { headers, body: structured(body) });
      expectSuccess(context, exchange);
      const type = (header(exchange, 'content-type') ?? '').split(';')[0]?.trim();
      if (type !== 'application/cloudevents+json') throw new CaseFailure(`want content-type application/cloudevents+json, got ${type ?? 'none'}`);
      const event = parseJson(exchange, 'the reply event') as Record<string, unknown> | null;
      expectReplyEvent({ specversion: event?.specversion, type: event?.type, id: event?.id, source: event?.source }, id);
      checkResponse(context, event?.data, 'the event data');
      return `200, type ${String(event?.type)}`;
    },
  },
  {
    group: 'cloudevents',
    name: '400 for an event of another type',
    skip: (context) => (isAdmission(context) ? 'admission functions take no CloudEvents' : undefined),
    run: async (context) => expectError(await send(context, { headers: binaryHeaders({ 'ce-type': 'com.example.other.v1' }), body: freshSample(context).body }), 400, ['InvalidCloudEvent']),
  },
  {
    group: 'cloudevents',
    name: '400 for an event without an id',
    skip: (context) => (isAdmission(context) ? 'admission functions take no CloudEvents' : undefined),
    run: async (context) => expectError(await send(context, { headers: binaryHeaders({ 'ce-id': undefined }), body: freshSample(context).body }), 400, ['InvalidCloudEvent']),
  },
];

function expectReplyEvent(attributes: { specversion: unknown; type: unknown; id: unknown; source: unknown }, id: string): void {
  if (attributes.specversion !== '1.0') throw new CaseFailure(`want reply specversion 1.0, got ${String(attributes.specversion)}`);
  if (attributes.type !== CLOUDEVENT_RESPONSE_TYPE) throw new CaseFailure(`want reply event type ${CLOUDEVENT_RESPONSE_TYPE}, got ${String(attributes.type)}`);
  if (attributes.id !== id) throw new CaseFailure(`want reply event id ${id} (the reconcile id), got ${String(attributes.id)}`);
  if (typeof attributes.source !== 'string' || attributes.source === '') throw new CaseFailure('the reply event has no source');
}

const withoutKey = (context: ConformanceContext): string | undefined => (context.signingKeys ? undefined : 'signing is off (give --signing-secret to check it)');
const MINUTES_6 = 6 * 60_000;

/** A signing case: this signature on the sample's body must be refused with 401 InvalidSignature, unsigned. */
function refusal(name: string, forge: (context: ConformanceContext, body: string) => { body: string; signature: Record<string, string> | false }): ConformanceCase {
  return {
    group: 'signing',
    name,
    skip: withoutKey,
    async run(context) {
      const forged = forge(context, freshSample(context).body);
      const exchange = await send(context, { headers: JSON_TYPE, body: forged.body, signature: forged.signature });
      const note = expectError(exchange, 401, ['InvalidSignature']);
      expectUnsigned(exchange);
      return note;
    },
  };
}

const keysOf = (context: ConformanceContext) => context.signingKeys ?? parseSigningSecrets(generateSigningSecret());
/** Signed with these keys (not derived), naming the context's audience. */
const signedWith = (keys: ReturnType<typeof keysOf>, context: ConformanceContext, body: string, options: { nowMs?: number } = {}) => ({
  ...signatureHeaders(keys, body, options),
  [AUDIENCE_HEADER]: context.audience,
});
/** An audience that is not the context's, of the same kind. */
const otherAudience = (context: ConformanceContext): string => `${context.audience.split('/')[0]}/conformance-other`;

const signingCases: ConformanceCase[] = [
  {
    group: 'signing',
    name: 'a signed request is answered with a reply signed with the reply key, for its webhook-id, fresh',
    skip: withoutKey,
    async run(context) {
      // Refused as the router refuses it: signed with the request key, the secret itself, or for another audience.
      const exchange = await send(context, { headers: JSON_TYPE, body: freshSample(context).body });
      expectSuccess(context, exchange);
      return `200, webhook-id ${header(exchange, 'webhook-id') ?? ''}`;
    },
  },
  refusal('401 for an unsigned request, the refusal unsigned', (_context, body) => ({ body, signature: false })),
  refusal('401 for a signature made with another key (forged)', (context, body) => ({ body, signature: signRequest(parseSigningSecrets(generateSigningSecret()), context.audience, body) })),
  refusal('401 for a valid signature lifted onto another body', (context, body) => ({ body, signature: signRequest(keysOf(context), context.audience, body.replace('"kind"', '"kind" ')) })),
  refusal('401 for a request signed 6 minutes ago (stale or replayed)', (context, body) => ({ body, signature: signRequest(keysOf(context), context.audience, body, { nowMs: Date.now() - MINUTES_6 }) })),
  refusal('401 for a request dated 6 minutes ahead', (context, body) => ({ body, signature: signRequest(keysOf(context), context.audience, body, { nowMs: Date.now() + MINUTES_6 }) })),
  refusal('401 for a request without x-kubeloop-audience', (context, body) => {
    const { [AUDIENCE_HEADER]: _audience, ...signature } = signRequest(keysOf(context), context.audience, body);
    return { body, signature };
  }),
  refusal('401 for a request signed for another audience', (context, body) => ({ body, signature: { ...signRequest(keysOf(context), otherAudience(context), body), [AUDIENCE_HEADER]: context.audience } })),
  refusal('401 for a request signed with the reply key (a reply passed off as a request)', (context, body) => ({ body, signature: signedWith(directionKeys(keysOf(context), 'reply', context.audience), context, body) })),
  refusal("401 for a request signed with the secret's own key, not the derived request key", (context, body) => ({ body, signature: signedWith(keysOf(context), context, body) })),
];

export const CONFORMANCE_CASES: readonly ConformanceCase[] = [...transportCases, ...cloudEventCases, ...signingCases];
