// The gateway's side of the shared function client (lib/function-client): POSTs AdmissionRequests,
// signed for the hook when it names a signing Secret, and turns every outcome into the gateway's
// CallResult. Error bodies go to the log (`detail`), never into the admission answer.
import type { AdmissionRequest } from '../../lib/contract/admission-types.ts';
import { createFunctionClient, type CallOutcome, type FunctionClient, type FunctionClientOptions } from '../../lib/function-client/function-client.ts';
import { audienceOf, type SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { REFUSAL_STATUSES, type CallFailure } from './hook-review.ts';

export type CallResult = { ok: true; reply: unknown } | { ok: false; failure: CallFailure; detail?: string };

/** Admission replies are small: 8 MiB, the runtime's own request limit. */
const MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** How the gateway reads a client outcome; pure, unit-tested. */
export function toCallResult(outcome: CallOutcome, timeoutMs: number): CallResult {
  if (outcome.kind === 'reply') return { ok: true, reply: outcome.value };
  if (outcome.kind === 'status') {
    // 400, 413 and 422: the function refused the request itself (too deep, too large, invalid): a validating
    // hook denies it whatever its failurePolicy, so a request shaped to be refused cannot slip past it.
    const kind = REFUSAL_STATUSES.has(outcome.status) ? 'Refused' : 'ErrorStatus';
    return { ok: false, failure: { kind, message: `answered HTTP ${outcome.status}` }, detail: outcome.detail };
  }
  switch (outcome.reason) {
    case 'Timeout':
      return { ok: false, failure: { kind: 'Timeout', message: `did not answer within ${timeoutMs} ms` } };
    case 'Unreachable':
      return { ok: false, failure: { kind: 'Unreachable', message: `is unreachable (${outcome.code ?? outcome.message})` } };
    case 'Overloaded':
      return { ok: false, failure: { kind: 'Unreachable', message: outcome.message } };
    case 'AddressRefused':
      return { ok: false, failure: { kind: 'Unreachable', message: `was not called: ${outcome.message}` } };
    default:
      return { ok: false, failure: { kind: 'InvalidResponse', message: outcome.message } };
  }
}

export interface CallOptions {
  timeoutMs: number;
  /** The hook's signing keys (spec.function.signingSecretRef): the request is signed, the reply must be. */
  signingKeys?: SigningKeys | undefined;
  /** PEM CA certificates trusted for an https function (the hook's spec.function.caBundle, decoded). */
  caBundle?: string | undefined;
  /** Sent as they are: the trace context (traceparent, tracestate). */
  headers?: Record<string, string>;
}

export class FunctionCaller {
  readonly #client: FunctionClient;

  constructor(options: FunctionClientOptions = {}) {
    // Admissions are small and latency-bound: keep connections warm for a minute between bursts.
    this.#client = createFunctionClient({ keepAliveMs: 60_000, ...options, limits: { maxBytes: MAX_REPLY_BYTES, ...options.limits } });
  }

  async call(url: string, request: AdmissionRequest, options: CallOptions): Promise<CallResult> {
    const outcome = await this.#client.call({
      url,
      body: JSON.stringify(request),
      timeoutMs: options.timeoutMs,
      caBundle: options.caBundle,
      headers: { 'x-kubeloop-reconcile-id': request.uid, ...options.headers },
      signing: options.signingKeys ? { keys: options.signingKeys, audience: audienceOf(request) } : undefined,
    });
    return toCallResult(outcome, options.timeoutMs);
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}
