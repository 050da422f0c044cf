// The gateway's one decision per admission, case by case: what the API server is answered, the outcome counted,
// and whether the hook's breaker and FunctionAvailable hear of it, from each place an admission can stop.
import { describe, expect, it } from 'vitest';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { decideAdmission } from './admission-decision.ts';
import type { CallFailure } from './hook-review.ts';

function hookWith(failurePolicy: 'Ignore' | 'Fail', type: 'validating' | 'mutating' = 'validating'): ResolvedHook {
  const hook: AdmissionHook = {
    metadata: { name: 'require-team' },
    spec: {
      type,
      failurePolicy,
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      function: { url: 'http://fn.shop.svc:8080/admit' },
      serviceAccount: { namespace: 'shop', name: 'require-team' },
    },
  };
  const result = resolveHook(hook);
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

const throttled: CallFailure = { kind: 'Throttled', message: 'was not called: tenant "cluster" has 1 admission calls in flight' };
const timeout: CallFailure = { kind: 'Timeout', message: 'did not answer within 4.5 s' };

describe('decideAdmission', () => {
  it('over the tenant cap: the failurePolicy answers; neither the breaker nor the latency hears of it', () => {
    const decision = decideAdmission('u-1', hookWith('Ignore'), { stage: 'tenant-cap', failure: throttled });
    expect(decision).toMatchObject({ stage: 'tenant-cap', outcome: 'Throttled', failure: throttled, reportsCall: false, observesDuration: false });
    expect(decision.response).toMatchObject({ uid: 'u-1', allowed: true, warnings: [expect.stringContaining('failurePolicy Ignore')] });
  });

  it('at an open breaker: denied under Fail, not reported again, no latency', () => {
    const open: CallFailure = { kind: 'CircuitOpen', message: 'was not called: its circuit breaker is open' };
    const decision = decideAdmission('u-2', hookWith('Fail'), { stage: 'breaker', failure: open });
    expect(decision).toMatchObject({ outcome: 'CircuitOpen', reportsCall: false, observesDuration: false, response: { uid: 'u-2', allowed: false } });
  });

  it('over a request bound: the failurePolicy answers and the latency is observed, the function is not blamed', () => {
    const tooLarge: CallFailure = { kind: 'ContextTooLarge', message: 'context over 1 MiB' };
    expect(decideAdmission('u-3', hookWith('Fail'), { stage: 'bounds', failure: tooLarge })).toMatchObject({ outcome: 'ContextTooLarge', reportsCall: false, observesDuration: true, response: { allowed: false } });
  });

  it('called: an allowed, denied or patched answer is the response, and the call is reported without a failure', () => {
    const hook = hookWith('Fail', 'mutating');
    const allowed = decideAdmission('u-4', hook, { stage: 'called', answer: { ok: true, response: { uid: 'u-4', allowed: true } } });
    expect(allowed).toEqual({ stage: 'called', outcome: 'allowed', response: { uid: 'u-4', allowed: true }, reportsCall: true, observesDuration: true });
    const denied = decideAdmission('u-4', hook, { stage: 'called', answer: { ok: true, response: { uid: 'u-4', allowed: false, status: { message: 'no team label' } } } });
    expect(denied).toMatchObject({ outcome: 'denied', response: { allowed: false, status: { message: 'no team label' } } });
    expect(denied.failure).toBeUndefined();
    const patched = decideAdmission('u-4', hook, { stage: 'called', answer: { ok: true, response: { uid: 'u-4', allowed: true, patchType: 'JSONPatch', patch: 'W10=' } } });
    expect(patched.outcome).toBe('patched');
  });

  it('called without a usable answer: the failurePolicy answers and the failure is reported to the breaker and status', () => {
    const decision = decideAdmission('u-5', hookWith('Ignore'), { stage: 'called', answer: { ok: false, failure: timeout } });
    expect(decision).toMatchObject({ outcome: 'Timeout', failure: timeout, reportsCall: true, observesDuration: true, response: { allowed: true } });
  });
});
