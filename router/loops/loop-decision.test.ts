import { describe, expect, it } from 'vitest';
import type { Loop } from '../../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, parseLoop } from '../base/loop-spec.ts';
import { decideLoop, planLoop, readyConditionChange } from './loop-decision.ts';

const loop = (spec: Partial<Loop['spec']> = {}, generation = 3): Loop => ({
  apiVersion: 'kubeloop.dev/v1alpha1',
  kind: 'ClusterLoop',
  metadata: { name: 'podset', generation },
  spec: {
    for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    function: { url: 'http://kubeloop-podset.kubeloop-system.svc:8080/' },
    serviceAccount: { namespace: 'kubeloop-system', name: 'podset-loop' },
    ...spec,
  },
});
const plan = (observed: Loop | undefined, running?: { specJson: string; signingProblem?: string }) => planLoop(observed, running, DEFAULT_FUNCTION_URL_POLICY);

describe('planLoop', () => {
  it('removes a Loop that is gone (deleted, or no longer selected)', () => {
    expect(plan(undefined, { specJson: '{}' })).toEqual({ kind: 'remove' });
    expect(plan(undefined)).toEqual({ kind: 'remove' });
  });

  it('starts a new Loop with its parsed config and generation', () => {
    const p = plan(loop());
    expect(p).toMatchObject({ kind: 'start', generation: 3, specJson: JSON.stringify(loop().spec) });
    expect(p.kind === 'start' && p.config).toEqual(parseLoop(loop()));
  });

  it('only reviews the access of a running Loop whose spec is unchanged', () => {
    expect(plan(loop(), { specJson: JSON.stringify(loop().spec) })).toEqual({ kind: 'review' });
  });

  it('restarts a running Loop whose spec changed', () => {
    const running = { specJson: JSON.stringify(loop().spec) };
    expect(plan(loop({ sendDeletes: true }), running)).toMatchObject({ kind: 'start' });
  });

  it('restarts an unchanged Loop whose signing Secret broke, so it waits for a valid key', () => {
    expect(plan(loop(), { specJson: JSON.stringify(loop().spec), signingProblem: 'no key' })).toMatchObject({ kind: 'start' });
  });

  it('stops and reports a Loop over its tenant\'s limit before anything else, even a running one', () => {
    expect(planLoop(loop(), { specJson: JSON.stringify(loop().spec) }, DEFAULT_FUNCTION_URL_POLICY, 'over')).toEqual({ kind: 'over-limit', message: 'over', generation: 3 });
    expect(decideLoop({ kind: 'over-tenant-limit', message: 'over' })).toMatchObject({ step: 'none', health: { ready: false, reason: 'TenantLimitExceeded', message: 'over' }, warning: { reason: 'TenantLimitExceeded' } });
  });

  it('reports a spec the router cannot run instead of starting it', () => {
    const p = plan(loop({ function: { url: 'ftp://nowhere/' } }));
    expect(p).toMatchObject({ kind: 'invalid', generation: 3 });
    expect(p.kind === 'invalid' && p.error).toBeInstanceOf(LoopSpecError);
  });
});

describe('decideLoop', () => {
  const config = parseLoop(loop());

  it('forgets the backoff of a started Loop and leaves Ready to its runner', () => {
    const d = decideLoop({ kind: 'started', config });
    expect(d.step).toBe('forget');
    expect(d.health).toBeUndefined();
    expect(d.log).toMatchObject({ level: 'info', message: 'Loop started', fields: { for: config.for, serviceAccount: config.serviceAccount } });
  });

  it('drops the health of a removed Loop, and logs only when it was running', () => {
    expect(decideLoop({ kind: 'removed', wasRunning: true })).toEqual({ step: 'none', forgetHealth: true, log: { level: 'info', message: 'Loop deleted; stopped' } });
    expect(decideLoop({ kind: 'removed', wasRunning: false })).toEqual({ step: 'none', forgetHealth: true });
  });

  it('does nothing when the periodic review still allows the Loop', () => {
    expect(decideLoop({ kind: 'still-allowed' })).toEqual({ step: 'none' });
  });

  it('reports an invalid spec with its reason and a Warning event, and waits for an edit (no retry)', () => {
    const error = new LoopSpecError('podset', 'spec.function.url', 'is not http(s)');
    const d = decideLoop({ kind: 'invalid-spec', error });
    expect(d).toMatchObject({ step: 'none', health: { ready: false, reason: 'InvalidSpec', message: error.message }, warning: { reason: 'InvalidSpec', message: error.message } });
  });

  it('gives a Loop without a ServiceAccount its own reason', () => {
    const error = new LoopSpecError('podset', 'spec.serviceAccount', 'is required');
    expect(decideLoop({ kind: 'invalid-spec', error })).toMatchObject({ health: { reason: 'ServiceAccountRequired' }, warning: { reason: 'ServiceAccountRequired' } });
  });

  it('backs a denied Loop off to review it again, Forbidden with a Warning event', () => {
    const d = decideLoop({ kind: 'access-denied', message: 'may not list pods' });
    expect(d).toMatchObject({ step: 'backoff', health: { ready: false, reason: 'Forbidden', message: 'may not list pods' }, warning: { reason: 'Forbidden' }, log: { level: 'warn' } });
  });

  it('backs off, without an event, while the signing Secret is unusable, a kind is not served or a watch is refused', () => {
    expect(decideLoop({ kind: 'signing-secret-invalid', message: 'm' })).toEqual({ step: 'backoff', health: { ready: false, reason: 'InvalidSigningSecret', message: 'm' } });
    expect(decideLoop({ kind: 'kind-unknown', message: 'm' })).toEqual({ step: 'backoff', health: { ready: false, reason: 'InvalidSpec', message: 'm' } });
    expect(decideLoop({ kind: 'watch-forbidden', message: 'm' })).toEqual({ step: 'backoff', health: { ready: false, reason: 'Forbidden', message: 'm' } });
  });
});

describe('decideLoop start-throttled', () => {
  it('requeues a throttled Loop after its reserved wait, StartThrottled, without a Warning event', () => {
    const decision = decideLoop({ kind: 'start-throttled', message: 'wait', waitMs: 1500 });
    expect(decision).toEqual({ step: 'after', delayMs: 1500, health: { ready: false, reason: 'StartThrottled', message: 'wait' } });
  });
});

describe('readyConditionChange', () => {
  const running = { ready: true, reason: 'Running' as const, message: 'watching' };

  it('writes the first condition, with the generation judged', () => {
    expect(readyConditionChange(undefined, running, 4)).toEqual({
      type: 'Ready', status: 'True', reason: 'Running', message: 'watching', observedGeneration: 4,
    });
  });

  it('writes nothing when only the message changed', () => {
    expect(readyConditionChange({ ...running, generation: 4 }, { ...running, message: 'calling http://x' }, 4)).toBeUndefined();
  });

  it('writes a changed status, reason or generation', () => {
    expect(readyConditionChange({ ...running, generation: 4 }, { ready: false, reason: 'FunctionUnreachable', message: 'down' }, 4)).toMatchObject({ status: 'False', reason: 'FunctionUnreachable' });
    expect(readyConditionChange({ ...running, generation: 4 }, running, 5)).toMatchObject({ observedGeneration: 5 });
  });

  it('writes a Loop held back by its start limit once, not again for each newer generation still held back', () => {
    const held = { ready: false, reason: 'StartThrottled' as const, message: 'starts in about 3 s' };
    expect(readyConditionChange({ ...held, generation: 4 }, { ...held, message: 'starts in about 9 s' }, 9)).toBeUndefined();
    expect(readyConditionChange({ ...held, generation: 4 }, running, 9)).toMatchObject({ status: 'True', observedGeneration: 9 });
  });

  it('cuts a long message to 1024 characters', () => {
    expect(readyConditionChange(undefined, { ...running, message: 'x'.repeat(5000) }, 1)?.message).toHaveLength(1024);
  });
});
