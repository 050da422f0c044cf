// The hook controller's decisions case by case: refused hooks told why, the ready ones registered, a tenant's
// newest hooks past its limit and the largest tenant of an oversized configuration left out alone, and what a
// registered hook is told (Ready with its configuration, or ContextPending).
import { describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { notReady } from './hook-status.ts';
import { decideRegistration, registeredVerdicts, type JudgedHook } from './registration-decision.ts';
import { servedHooksOf } from './served-hooks.ts';

const rule = (resources: string[]) => ({ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources });

function object(name: string, namespace: string | undefined, created: string, spec: Partial<AdmissionHookSpec> = {}): AdmissionHook {
  return {
    metadata: { name, generation: 3, creationTimestamp: created as unknown as Date, ...(namespace ? { namespace } : {}) },
    spec: { type: 'validating', rules: [rule(['configmaps'])], function: { url: 'http://127.0.0.1:1/admit' }, serviceAccount: { namespace: namespace ?? 'ops', name: 'sa' }, ...spec },
  };
}

function judged(hook: AdmissionHook): JudgedHook {
  const result = resolveHook(hook, { ...DEV_HOOK_POLICY, maxEntryBytes: 1024 * 1024 });
  if (!result.ok) throw new Error(result.message);
  return { hook, resolved: result.hook };
}

const shards = { name: 'kubeloop-admission-hooks', target: { urlBase: 'https://127.0.0.1:1' }, kubeloopNamespace: 'kubeloop', buckets: 1, maxBytes: 64 * 1024 };

describe('decideRegistration', () => {
  it('registers the hooks not refused and keeps each refusal as the hook\'s verdict', () => {
    const refused = object('no-access', 'team-a', '2026-01-01T00:00:00Z');
    const refusal = notReady('ContextForbidden', 'its ServiceAccount may not get configmaps', 3);
    const { ready, verdicts } = decideRegistration({ judged: [judged(object('gate', undefined, '2026-01-01T00:00:00Z')), { ...judged(refused), refusal }], slots: new Map(), shards });
    expect([...ready.keys()]).toEqual(['gate']);
    expect(verdicts.get(refused)).toBe(refusal);
  });

  it('leaves out a namespace\'s newest hooks past the tenant limit, with the reason, and no other tenant\'s', () => {
    const oldest = object('first', 'team-a', '2026-01-01T00:00:00Z');
    const newest = object('second', 'team-a', '2026-01-02T00:00:00Z');
    const other = object('only', 'team-b', '2026-01-03T00:00:00Z');
    const { ready, verdicts } = decideRegistration({ judged: [newest, oldest, other].map(judged), slots: new Map(), shards, tenantMaxHooks: 1 });
    expect([...ready.keys()].sort()).toEqual(['team-a/first', 'team-b/only']);
    expect(verdicts.get(newest)).toMatchObject({ type: 'Ready', status: 'False', reason: 'TenantLimitExceeded', observedGeneration: 3 });
    expect(verdicts.size).toBe(1);
  });

  it('leaves out the largest tenant\'s hooks when their configuration is over its byte bound, and serves the others', () => {
    const bulky = object('bulky', 'team-a', '2026-01-01T00:00:00Z', { rules: [rule(Array.from({ length: 80 }, (_, i) => `r${i}${'x'.repeat(1000)}`))] });
    const small = object('small', 'team-b', '2026-01-01T00:00:00Z');
    const { ready, verdicts } = decideRegistration({ judged: [bulky, small].map(judged), slots: new Map(), shards });
    expect([...ready.keys()]).toEqual(['team-b/small']);
    expect(verdicts.get(bulky)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  });
});

describe('registeredVerdicts', () => {
  it('tells a served hook it is registered in its configuration, or that its context is pending; a verdict already given stays', () => {
    const cluster = object('gate', undefined, '2026-01-01T00:00:00Z');
    const tenant = object('gate', 'team-a', '2026-01-01T00:00:00Z');
    const refused = object('refused', 'team-a', '2026-01-01T00:00:00Z');
    const ready = [cluster, tenant].map((h) => judged(h).resolved!);
    const { served } = servedHooksOf(ready, new Map());
    const earlier = new Map([[refused, notReady('InvalidSpec', 'bad', 3)]]);
    const pending = (hook: ResolvedHook) => (hook.namespace ? 'configmaps in team-a not yet cached' : undefined);
    const verdicts = registeredVerdicts([cluster, tenant, refused], served, earlier, pending, (hook) => (hook.namespace ? 'tenant-0' : 'kubeloop-admission-hooks'));
    expect(verdicts.get(cluster)).toMatchObject({ status: 'True', reason: 'Registered', message: expect.stringContaining('ValidatingWebhookConfiguration kubeloop-admission-hooks') });
    expect(verdicts.get(tenant)).toMatchObject({ status: 'False', reason: 'ContextPending', message: expect.stringContaining('configmaps in team-a not yet cached') });
    expect(verdicts.get(refused)).toMatchObject({ reason: 'InvalidSpec' });
    expect(earlier.size).toBe(1);
  });
});
