// Namespaced AdmissionHooks at the gateway: confinement to their namespace, grouping into a bounded number of
// webhook entries, dispatch by the request's namespace, and the per-tenant cap on calls in flight.
import { describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { validateAdmissionRequest } from '../../lib/contract/validate.ts';
import { isAudience } from '../../lib/signing/standard-webhooks.ts';
import { audienceOf } from '../../lib/signing/webhook-signature.ts';
import { isNamespaceSent } from './namespace-safety.ts';
import { buildHookConfigurations } from './hook-configuration.ts';
import { groupNamespacedHooks, shapeKey, shapeOf } from '../base/hook-groups.ts';
import { applyFailurePolicy, toFunctionRequest } from '../gateway/hook-review.ts';
import { resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { servedDuringUpdate, servedHooksOf } from './served-hooks.ts';
import { groupHook } from '../../test/support/served-hooks.ts';
import { TenantLimiter, tenantKey } from '../gateway/tenant-limiter.ts';

const baseSpec: AdmissionHookSpec = {
  type: 'validating',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  // A namespaced hook may omit these namespaces (the CRD allows it; the shared TypeScript type requires them).
  function: { service: { name: 'fn', port: 8080 } as unknown as { name: string; namespace: string } },
  serviceAccount: { name: 'hook' } as { name: string; namespace: string },
};

const hookIn = (namespace: string | undefined, name = 'require-team', spec: Partial<AdmissionHookSpec> = {}): AdmissionHook => ({
  metadata: { name, ...(namespace ? { namespace } : {}), generation: 1 },
  spec: { ...baseSpec, ...spec },
});

function resolved(namespace: string, name?: string, spec: Partial<AdmissionHookSpec> = {}): ResolvedHook {
  const result = resolveHook(hookIn(namespace, name, spec));
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

function refusal(spec: Partial<AdmissionHookSpec>): string {
  const result = resolveHook(hookIn('team-a', 'h', spec));
  if (result.ok) throw new Error('resolved');
  expect(result.reason).toBe('InvalidSpec');
  return result.message;
}

describe('a namespaced AdmissionHook is confined to its namespace', () => {
  it('is known as <namespace>/<name>, runs as a ServiceAccount of its namespace and calls its Service there', () => {
    const hook = resolved('team-a');
    expect(hook).toMatchObject({ id: 'team-a/require-team', name: 'require-team', namespace: 'team-a', spec: { serviceAccount: { namespace: 'team-a', name: 'hook' } } });
    expect(hook.functionUrl).toBe('http://fn.team-a.svc:8080/admit');
    expect(hook.spec.rules.every((rule) => rule.scope === 'Namespaced')).toBe(true);
  });

  it("calls its shadow's and canary's Services and reads their signing Secrets in its namespace", () => {
    const omitted = { name: 's', key: 'k' } as unknown as { name: string; namespace: string; key: string };
    const version = { service: { name: 'fn2', port: 8080 } as unknown as { name: string; namespace: string }, signingSecretRef: omitted };
    const hook = resolved('team-a', 'h', { function: { url: 'http://fn.team-a.svc/admit', shadow: version, canary: { ...version, weight: 10, errorBudget: { maxErrors: 1, windowSeconds: 60 } } } });
    expect([hook.versions.shadow?.url, hook.versions.canary?.url]).toEqual(['http://fn2.team-a.svc:8080/admit', 'http://fn2.team-a.svc:8080/admit']);
    expect([hook.spec.function.shadow?.signingSecretRef?.namespace, hook.spec.function.canary?.signingSecretRef?.namespace]).toEqual(['team-a', 'team-a']);
  });

  it('reads "Same" and unnamed context namespaces as its own', () => {
    const hook = resolved('team-a', 'h', { context: [{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'x' }, namespace: 'Same' }, { name: 'b', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'y' } }] });
    expect(hook.context.map((entry) => entry.namespace)).toEqual(['team-a', 'team-a']);
  });

  it.each([
    [{ serviceAccount: { namespace: 'team-b', name: 'hook' } }, 'serviceAccount: namespace "team-b" is not the hook\'s own (team-a)'],
    [{ function: { service: { name: 'fn', namespace: 'team-b' } } }, 'function.service: namespace "team-b"'],
    [{ function: { url: 'http://fn.team-a.svc/admit', signingSecretRef: { name: 's', namespace: 'team-b', key: 'k' } } }, 'function.signingSecretRef: namespace "team-b"'],
    [{ context: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'x' }, namespace: 'team-b' }] }, 'context "cfg": namespace "team-b"'],
    [{ rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' as const }] }, 'rules[0].scope: "Cluster" would send cluster-scoped requests'],
    [{ rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' as const }] }, 'rules[0].scope: "*"'],
    [{ namespaceSelector: { matchLabels: { team: 'b' } } }, 'namespaceSelector: an AdmissionHook sees only its own namespace'],
    [{ function: { url: 'http://fn.team-a.svc/admit', shadow: { service: { name: 'fn', namespace: 'team-b' } } } }, 'function.shadow.service: namespace "team-b"'],
    [{ function: { url: 'http://fn.team-a.svc/admit', shadow: { url: 'http://fn2.team-a.svc/admit', signingSecretRef: { name: 's', namespace: 'team-b', key: 'k' } } } }, 'function.shadow.signingSecretRef: namespace "team-b"'],
    [{ function: { url: 'http://fn.team-a.svc/admit', canary: { url: 'http://fn2.team-a.svc/admit', namespaces: ['team-a', 'team-b'], errorBudget: { maxErrors: 1, windowSeconds: 60 } } } }, 'function.canary.namespaces: namespace "team-b"'],
  ])('refuses %j as InvalidSpec', (spec, message) => {
    expect(refusal(spec)).toContain(message);
  });

  it('asks a namespaced hook for a ServiceAccount name only', () => {
    expect(resolveHook(hookIn('team-a', 'h', { serviceAccount: undefined }))).toMatchObject({ ok: false, reason: 'ServiceAccountRequired', message: expect.stringContaining('spec.serviceAccount { name }') });
  });

  it('signs for hook/<namespace>/<name>, an audience functions accept', () => {
    expect(isAudience(`hook/${resolved('team-a').id}`)).toBe(true);
    expect(isAudience('hook/require-team')).toBe(true);
    expect(isAudience('hook/team-a/b/c')).toBe(false);
  });

  it('tells its function its namespace (request.hookNamespace), so a replay signs for the audience the gateway signs for', () => {
    const review = { uid: 'u', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'team-a', operation: 'CREATE' as const };
    const request = toFunctionRequest(review, resolved('team-a'), {}, new Date('2026-11-26T10:00:00Z'));
    expect(request).toMatchObject({ hook: 'require-team', hookNamespace: 'team-a' });
    expect(audienceOf(request)).toBe('hook/team-a/require-team');
    expect(validateAdmissionRequest(request).ok).toBe(true);
    const cluster = resolveHook(hookIn(undefined, 'c', { serviceAccount: { namespace: 'x', name: 'y' }, function: { url: 'http://fn.x.svc/admit' } }));
    if (!cluster.ok) throw new Error(cluster.message);
    expect(audienceOf(toFunctionRequest(review, cluster.hook, {}, new Date()))).toBe('hook/c');
  });
});

describe('groupNamespacedHooks', () => {
  it('puts the hooks of one shape in many namespaces into one entry listing those namespaces', () => {
    const hooks = ['team-c', 'team-a', 'team-b'].map((ns) => resolved(ns));
    const { groups } = groupNamespacedHooks(hooks);
    expect(groups).toHaveLength(1);
    expect([...groups[0]!.members.keys()]).toEqual(['team-a', 'team-b', 'team-c']);
    expect(groups[0]!.path).toMatch(/^\/admit-namespaced\/v-[0-9a-f]{12}-0$/);
  });

  it('gives k hooks of one shape in a namespace k entries, each calling one of them', () => {
    const hooks = [resolved('team-a', 'one'), resolved('team-a', 'two'), resolved('team-b', 'only')];
    const { groups } = groupNamespacedHooks(hooks);
    expect(groups.map((g) => [...g.members].map(([ns, hook]) => `${ns}:${hook.name}`))).toEqual([['team-a:one', 'team-b:only'], ['team-a:two']]);
  });

  it('separates shapes: type, rules, failurePolicy, timeout, matchConditions, objectSelector', () => {
    const variants: Array<Partial<AdmissionHookSpec>> = [
      {},
      { type: 'mutating' },
      { failurePolicy: 'Ignore' },
      // Namespaced hooks default to the cap (3 s); a shorter timeout is another shape.
      { timeoutSeconds: 2 },
      { matchConditions: [{ name: 'm', expression: 'true' }] },
      { objectSelector: { matchLabels: { a: 'b' } } },
      { rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
    ];
    const hooks = variants.map((spec, i) => resolved(`ns-${i}`, 'h', spec));
    expect(new Set(hooks.map((hook) => shapeKey(shapeOf(hook)))).size).toBe(variants.length);
    expect(groupNamespacedHooks(hooks).groups).toHaveLength(variants.length);
  });

  it('reads the same shape whatever the key order of the spec', () => {
    const a = resolved('a', 'h', { objectSelector: { matchLabels: { x: '1', y: '2' } } });
    const b = resolved('b', 'h', { objectSelector: { matchLabels: { y: '2', x: '1' } } });
    expect(shapeKey(shapeOf(a))).toBe(shapeKey(shapeOf(b)));
  });

  it('keeps a hook in its entry when a neighbour before it is added or deleted; a new hook takes the lowest free slot', () => {
    const first = groupNamespacedHooks([resolved('team-a', 'm'), resolved('team-a', 'z')]);
    const entryOf = (grouping: ReturnType<typeof groupNamespacedHooks>, name: string) => grouping.groups.find((g) => g.members.get('team-a')?.name === name)?.slot;
    expect([entryOf(first, 'm'), entryOf(first, 'z')]).toEqual([0, 1]);
    const deleted = groupNamespacedHooks([resolved('team-a', 'z')], first.slots);
    expect(entryOf(deleted, 'z')).toBe(1);
    const added = groupNamespacedHooks([resolved('team-a', 'a'), resolved('team-a', 'z')], deleted.slots);
    expect([entryOf(added, 'a'), entryOf(added, 'z')]).toEqual([0, 1]);
  });

  it('leaves ClusterAdmissionHooks out', () => {
    const cluster = resolveHook(hookIn(undefined, 'c', { serviceAccount: { namespace: 'x', name: 'y' }, function: { url: 'http://fn.x.svc/admit' } }));
    expect(cluster.ok && groupNamespacedHooks([cluster.hook]).groups).toEqual([]);
  });
});

describe('the webhook configuration of grouped hooks', () => {
  const options = { name: 'hooks', target: { service: { name: 'gw', namespace: 'kubeloop' } }, kubeloopNamespace: 'kubeloop' };
  const hooks = Array.from({ length: 100 }, (_, i) => resolved(`team-${String(i).padStart(3, '0')}`));
  const { groups } = groupNamespacedHooks(hooks);

  it('serves 100 namespaces of one shape through one entry whose selector lists them, ANDed with the safety expressions', () => {
    const { validating, mutating } = buildHookConfigurations(hooks, options, groups);
    expect(mutating.webhooks).toEqual([]);
    expect(validating.webhooks).toHaveLength(1);
    const entry = validating.webhooks![0]!;
    expect(entry.name).toMatch(/^v-[0-9a-f]{12}-0\.namespaced\.hooks\.kubeloop\.dev$/);
    expect(entry.clientConfig.service?.path).toBe(groups[0]!.path);
    expect(entry.namespaceSelector?.matchExpressions).toEqual([
      { key: 'kubernetes.io/metadata.name', operator: 'In', values: hooks.map((hook) => hook.namespace) },
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kubeloop'] },
    ]);
    expect(entry).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 3, sideEffects: 'None', objectSelector: {}, rules: [expect.objectContaining({ scope: 'Namespaced' })] });
  });
});

describe('isNamespaceSent', () => {
  it('tells a hook in kube-system, the gateway\'s namespace, an excluded one or one outside --only-namespace that it would see nothing', () => {
    const safety = { kubeloopNamespace: 'kubeloop', excludedNamespaces: ['kube-public'] };
    expect(['team-a', 'kube-system', 'kubeloop', 'kube-public'].map((ns) => isNamespaceSent(ns, safety))).toEqual([true, false, false, false]);
    expect(['team-a', 'team-b'].map((ns) => isNamespaceSent(ns, { ...safety, onlyNamespaces: ['team-a'] }))).toEqual([true, false]);
  });
});

describe('dispatch by namespace', () => {
  const a = resolved('team-a');
  const b = resolved('team-b');
  const { served, grouping } = servedHooksOf([a, b], new Map());
  const group = grouping.groups[0]!.id;

  it('sends a request to the hook of its namespace, and one of a namespace without a hook nowhere', () => {
    expect(groupHook(served, group, 'team-a')?.id).toBe('team-a/require-team');
    expect(groupHook(served, group, 'team-b')?.id).toBe('team-b/require-team');
    expect(groupHook(served, group, 'team-c')).toBeUndefined();
    expect(groupHook(served, group, undefined)).toBeUndefined();
    expect(served.byId.get('team-a/require-team')?.path).toBe(`/admit-namespaced/${group}`);
  });

  it('answers by the old table and the new one while a configuration is written', () => {
    const next = servedHooksOf([resolved('team-c')], new Map()).served;
    const during = servedDuringUpdate(served, next);
    expect(['team-a', 'team-b', 'team-c'].map((ns) => groupHook(during, group, ns)?.namespace)).toEqual(['team-a', 'team-b', 'team-c']);
  });
});

describe('TenantLimiter', () => {
  it('caps the calls in flight of each tenant apart; cluster hooks are the one tenant _cluster', () => {
    const limiter = new TenantLimiter(2);
    expect([limiter.tryAcquire('team-a'), limiter.tryAcquire('team-a'), limiter.tryAcquire('team-a')]).toEqual([true, true, false]);
    expect(limiter.tryAcquire('team-b')).toBe(true);
    expect(limiter.tryAcquire('_cluster')).toBe(true);
    limiter.release('team-a');
    expect(limiter.tryAcquire('team-a')).toBe(true);
    expect(tenantKey(resolved('team-a'))).toBe('team-a');
    expect(tenantKey({ ...resolved('team-a'), namespace: undefined })).toBe('_cluster');
  });

  it('over the cap a Fail hook denies with 429 and an Ignore hook admits with a warning', () => {
    const failure = { kind: 'Throttled' as const, message: 'was not called: tenant "team-a" has 2 admission calls in flight' };
    expect(applyFailurePolicy('u', resolved('team-a'), failure)).toMatchObject({ allowed: false, status: { code: 429, reason: 'TooManyRequests', message: expect.stringContaining('admission hook "team-a/require-team"') } });
    expect(applyFailurePolicy('u', resolved('team-a', 'h', { failurePolicy: 'Ignore' }), failure)).toMatchObject({ allowed: true, warnings: [expect.stringContaining('failurePolicy Ignore')] });
  });
});
