// What one admission may make the gateway hold: the lookup's verdicts pass through as failures (an oversized
// context sets ContextBounded=False on the hook, True again after), and bytes are reserved per tenant until released.
import { describe, expect, it } from 'vitest';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import type { ContextResult } from './context-cache.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { RequestBounds } from './request-bounds.ts';

const MiB = 1024 * 1024;

function hookIn(namespace: string): ResolvedHook {
  const result = resolveHook(
    { metadata: { name: 'gate', namespace }, spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], function: { url: 'http://127.0.0.1:1/admit' }, serviceAccount: { namespace, name: 'gate' } } },
    DEV_HOOK_POLICY,
  );
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

describe('request bounds', () => {
  it('answers an oversized context by failure, reports it on the hook once, and clears it on the next request within bounds', () => {
    let next: ContextResult = { ok: false, reason: 'ContextTooLarge', message: 'its context objects take more than 1048576 bytes' };
    const reported: Array<[string, ConditionInput]> = [];
    const bounds = new RequestBounds({ contexts: { lookup: () => next }, metrics: createMetricsRegistry({ defaultMetrics: false }), maxContextBytes: MiB, maxInFlightBytes: 8 * MiB, tenants: () => 2, reportCondition: (hook, condition) => reported.push([hook, condition]) });
    const hook = hookIn('team-a');
    expect(bounds.prepare(hook, 'team-a', undefined, 'team-a', 100)).toEqual({ ok: false, failure: { kind: 'ContextTooLarge', message: 'was not called: its context objects take more than 1048576 bytes' } });
    expect(reported).toEqual([['team-a/gate', expect.objectContaining({ type: 'ContextBounded', status: 'False', reason: 'ContextTooLarge' })]]);
    next = { ok: true, context: {}, bytes: 10 };
    const prepared = bounds.prepare(hook, 'team-a', undefined, 'team-a', 100);
    expect(prepared.ok).toBe(true);
    expect(reported[1]).toEqual(['team-a/gate', expect.objectContaining({ type: 'ContextBounded', status: 'True' })]);
    // Within bounds again: nothing more to report.
    bounds.prepare(hook, 'team-a', undefined, 'team-a', 100);
    expect(reported).toHaveLength(2);
  });

  it("refuses a tenant's bytes past its share while another tenant's still fit, until released", () => {
    const bounds = new RequestBounds({ contexts: { lookup: () => ({ ok: true, context: {}, bytes: 3 * MiB }) }, metrics: createMetricsRegistry({ defaultMetrics: false }), maxContextBytes: 4 * MiB, maxInFlightBytes: 8 * MiB, tenants: () => 2 });
    const a = hookIn('team-a');
    const first = bounds.prepare(a, 'team-a', undefined, 'team-a', 0);
    expect(first.ok).toBe(true);
    const second = bounds.prepare(a, 'team-a', undefined, 'team-a', 0);
    expect(second).toMatchObject({ ok: false, failure: { kind: 'Throttled', message: expect.stringContaining('over its share of the gateway\'s in-flight request bytes') } });
    expect(bounds.prepare(hookIn('team-b'), 'team-b', undefined, 'team-b', 0).ok).toBe(true);
    if (first.ok) first.release();
    expect(bounds.prepare(a, 'team-a', undefined, 'team-a', 0).ok).toBe(true);
  });
});
