import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { HookFunction } from '../../api/admission-hook.ts';
import { inCanaryShare } from '../../lib/versions/canary-share.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { FunctionCaller } from './function-caller.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { GatewayVersions } from './hook-versions.ts';

function hookWith(fn: HookFunction): ResolvedHook {
  const resolved = resolveHook(
    {
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'ClusterAdmissionHook',
      metadata: { name: 'h' },
      spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], serviceAccount: { namespace: 'ns', name: 'sa' }, function: fn },
    },
    DEV_HOOK_POLICY,
  );
  if (!resolved.ok) throw new Error(resolved.message);
  return resolved.hook;
}

const silent = { info: () => {}, warn: () => {} };
const versionsWith = (conditions: ConditionInput[]) =>
  new GatewayVersions({ caller: {} as FunctionCaller, metrics: new Registry(), logger: silent, reportCondition: (_hook, c) => conditions.push(c), now: () => 1_000 });

describe('hook canary', () => {
  const budget = { maxErrors: 1, windowSeconds: 60 };
  it('takes the weight of the requests by uid, and only in its namespaces when it names them', () => {
    const versions = versionsWith([]);
    const hook = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:2/canary', weight: 30, namespaces: ['shop'], errorBudget: budget } });
    const uids = Array.from({ length: 200 }, (_, i) => `uid-${i}`);
    for (const uid of uids) {
      expect(versions.route(hook, { uid, namespace: 'shop' }) !== undefined).toBe(inCanaryShare(uid, 30));
      expect(versions.route(hook, { uid, namespace: 'other' })).toBeUndefined();
    }
  });
  it('rolls back when the budget is spent, and starts again only when its spec changes', () => {
    const conditions: ConditionInput[] = [];
    const versions = versionsWith(conditions);
    const hook = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:2/canary', namespaces: ['shop'], errorBudget: budget } });
    const first = versions.route(hook, { uid: 'a', namespace: 'shop' });
    expect(first?.canary.url).toBe('http://127.0.0.1:2/canary');
    first?.answered(true);
    const second = versions.route(hook, { uid: 'a', namespace: 'shop' });
    expect(second).toBeDefined();
    second?.answered(true);
    expect(versions.route(hook, { uid: 'a', namespace: 'shop' })).toBeUndefined();
    expect(conditions.at(-1)).toMatchObject({ type: 'CanaryRolledBack', status: 'True', reason: 'ErrorBudgetSpent' });
    // The same spec resolved again (a gateway resync) stays rolled back; a changed canary starts afresh.
    const same = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:2/canary', namespaces: ['shop'], errorBudget: budget } });
    expect(versions.route(same, { uid: 'a', namespace: 'shop' })).toBeUndefined();
    const changed = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:3/canary', namespaces: ['shop'], errorBudget: budget } });
    expect(versions.route(changed, { uid: 'a', namespace: 'shop' })?.canary.url).toBe('http://127.0.0.1:3/canary');
    expect(conditions.at(-1)).toMatchObject({ type: 'CanaryRolledBack', status: 'False', reason: 'CanaryActive' });
  });
  it('charges the canary it chose: an answer that arrives after the canary changed spends nothing of the new one', () => {
    const conditions: ConditionInput[] = [];
    const versions = versionsWith(conditions);
    const old = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:2/canary', namespaces: ['shop'], errorBudget: budget } });
    const chosen = versions.route(old, { uid: 'a', namespace: 'shop' });
    const changed = hookWith({ url: 'http://127.0.0.1:1/live', canary: { url: 'http://127.0.0.1:3/canary', namespaces: ['shop'], errorBudget: budget } });
    expect(versions.route(changed, { uid: 'b', namespace: 'shop' })?.canary.url).toBe('http://127.0.0.1:3/canary');
    chosen?.answered(true);
    chosen?.answered(true);
    expect(versions.route(changed, { uid: 'c', namespace: 'shop' })?.canary.url).toBe('http://127.0.0.1:3/canary');
    expect(conditions.filter((c) => c.status === 'True')).toEqual([]);
  });
  it('refuses a canary without a share or a budget, and a shadow URL the policy refuses', () => {
    const resolve = (fn: HookFunction) => resolveHook({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterAdmissionHook', metadata: { name: 'h' }, spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], serviceAccount: { namespace: 'ns', name: 'sa' }, function: fn } });
    expect(resolve({ url: 'http://f.ns.svc/', canary: { url: 'http://c.ns.svc/', errorBudget: budget } })).toMatchObject({ ok: false, message: 'function.canary: give a weight, namespaces, or both' });
    expect(resolve({ url: 'http://f.ns.svc/', canary: { url: 'http://c.ns.svc/', weight: 5, errorBudget: { windowSeconds: 60 } } })).toMatchObject({ ok: false, message: 'function.canary.errorBudget needs maxErrors or ratio' });
    expect(resolve({ url: 'http://f.ns.svc/', shadow: { url: 'http://127.0.0.1:9/' } })).toMatchObject({ ok: false, message: expect.stringContaining('function.shadow http://127.0.0.1:9/') });
  });
});
