// POSTs a (recorded) request to a function over HTTP (plain JSON or either CloudEvents mode) and compares the reply.
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { AdmissionResponse } from '../contract/admission-types.ts';
import { CLOUDEVENT_TYPE, type ReconcileRequest, type ReconcileResponse } from '../contract/types.ts';
import { audienceOf, signRequest, verifyReply, type SigningKeys } from '../signing/webhook-signature.ts';
import { compareResponses, type Difference } from './compare-responses.ts';
import { isAdmissionFixture, responseValidatorFor, type Fixture } from './fixtures.ts';
import { diffJson } from './json-diff.ts';

/** batch-json and batch-cloudevents send a folder's reconcile fixtures together (replay-batch.ts). */
export type ReplayMode = 'json' | 'binary' | 'structured' | 'batch-json' | 'batch-cloudevents';

export interface ReplayOptions {
  /** Function URL; the request goes to it as given (e.g. http://localhost:8080/). */
  url: string;
  mode?: ReplayMode;
  timeoutMs?: number;
  /** Compare event messages verbatim too (`kubeloop replay --strict`). */
  strict?: boolean;
  /**
   * Sign each request for its Loop or hook (audienceOf) with the derived request key, and accept a 200 reply
   * only when signed with the reply key for that request's webhook-id, fresh: the router's and the gateway's
   * own functions (lib/signing/webhook-signature.ts), so replay judges signing as they do (`--signing-secret`, and `kubeloop diff` for a Loop with
   * spec.function.signingSecretRef).
   */
  signingKeys?: SigningKeys;
}

export type ReplayResult =
  | { outcome: 'pass' }
  /** `actual` is the function's reply (a ReconcileResponse or an AdmissionResponse), for `kubeloop replay --update`. */
  | { outcome: 'mismatch'; differences: Difference[]; actual: unknown }
  /** No comparable reply: connection failure, timeout, non-200, or a body that is not a ReconcileResponse. */
  | { outcome: 'error'; message: string };

type AnyRequest = Fixture['request'];

function encode(sent: AnyRequest, mode: ReplayMode): { headers: Record<string, string>; body: string } {
  const data = JSON.stringify(sent);
  // Admission functions take plain JSON only (docs/admission.md).
  if (mode === 'json' || mode === 'batch-json' || mode === 'batch-cloudevents' || sent.kind === 'AdmissionRequest') return { headers: { 'content-type': 'application/json' }, body: data };
  const id = sent.reconcileId ?? randomUUID();
  if (mode === 'binary') {
    return {
      headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': '/kubeloop/replay', 'ce-type': CLOUDEVENT_TYPE },
      body: data,
    };
  }
  return {
    headers: { 'content-type': 'application/cloudevents+json' },
    body: `{"specversion":"1.0","id":${JSON.stringify(id)},"source":"/kubeloop/replay","type":"${CLOUDEVENT_TYPE}","datacontenttype":"application/json","data":${data}}`,
  };
}

/** A reply that is a valid response for the request's side of the contract, or why there is none. */
export type CallResult = { ok: true; response: ReconcileResponse | AdmissionResponse } | { ok: false; message: string };

/** POSTs one ReconcileRequest (or AdmissionRequest) to a function and checks the reply against the contract. */
export async function callFunction(sent: AnyRequest, options: ReplayOptions): Promise<CallResult> {
  const mode = options.mode ?? 'json';
  const { headers, body } = encode(sent, mode);
  const audience = audienceOf(sent);
  const signed = options.signingKeys ? signRequest(options.signingKeys, audience, body) : undefined;
  const timeout = options.timeoutMs ?? 10_000;
  let status: number;
  let text: string;
  let replyHeaders: Record<string, string | string[] | undefined>;
  try {
    const reply = await request(options.url, { method: 'POST', headers: { ...headers, ...signed }, body, headersTimeout: timeout, bodyTimeout: timeout });
    status = reply.statusCode;
    replyHeaders = reply.headers;
    text = await reply.body.text();
  } catch (error) {
    // undici's own words ("Headers Timeout Error") do not say what happened: the function did not answer.
    const code = (error as { code?: unknown }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return { ok: false, message: `POST ${options.url}: no answer within ${timeout} ms` };
    return { ok: false, message: `POST ${options.url} failed: ${(error as Error).message}` };
  }
  if (status !== 200) return { ok: false, message: `HTTP ${status}: ${text.slice(0, 500)}` };
  if (signed && options.signingKeys) {
    const verdict = verifyReply(options.signingKeys, audience, signed['webhook-id'], replyHeaders, text);
    if (!verdict.ok) return { ok: false, message: `reply signature refused: ${verdict.message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, message: `reply is not JSON: ${text.slice(0, 200)}` };
  }
  const admission = sent.kind === 'AdmissionRequest';
  if (mode === 'structured' && !admission) parsed = (parsed as { data?: unknown } | null)?.data;
  const checked = responseValidatorFor(sent)(parsed);
  if (!checked.ok) return { ok: false, message: `reply is not a valid ${admission ? 'AdmissionResponse' : 'ReconcileResponse'}: ${checked.errors.join('; ')}` };
  return { ok: true, response: checked.value };
}

export async function replayFixture(fixture: Fixture, options: ReplayOptions): Promise<ReplayResult> {
  return judgeReply(fixture, await callFunction(fixture.request, options), options);
}

/** Compares a reply (however it was called for) with the fixture's recorded response. */
export function judgeReply(fixture: Fixture, reply: CallResult, options: Pick<ReplayOptions, 'strict'>): ReplayResult {
  if (!reply.ok) return { outcome: 'error', message: reply.message };
  // A JSON patch is applied in order and warnings are shown in order: an admission reply compares exactly.
  const differences = isAdmissionFixture(fixture) ? diffJson(fixture.response, reply.response) : compareResponses(fixture.response, reply.response as ReconcileResponse, { request: fixture.request as ReconcileRequest, strict: options.strict === true });
  return differences.length === 0 ? { outcome: 'pass' } : { outcome: 'mismatch', differences, actual: reply.response };
}
