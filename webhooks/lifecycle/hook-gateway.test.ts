// The gateway's pure pieces: hook checks, the webhook configurations, answer conversion, failure policy, context names.
import { describe, expect, it } from 'vitest';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { AdmissionRequest as ReviewRequest } from '../gateway/admission-review.ts';
import { contextNamespace, contextObjectName, slimContextObject } from '../gateway/context-objects.ts';
import { buildHookConfigurations } from './hook-configuration.ts';
import { applyFailurePolicy, toFunctionRequest, toReviewResponse } from '../gateway/hook-review.ts';
import { DEFAULT_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';

const hook = (spec: Partial<NonNullable<AdmissionHook['spec']>> = {}, name = 'require-team'): AdmissionHook => ({
  metadata: { name, generation: 2 },
  spec: {
    type: 'validating',
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    function: { url: 'http://fn.shop.svc:8080/admit' },
    serviceAccount: { namespace: 'shop', name: 'require-team' },
    ...spec,
  },
});

function resolved(spec: Partial<NonNullable<AdmissionHook['spec']>> = {}, name?: string): ResolvedHook {
  const result = resolveHook(hook(spec, name));
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

const review: ReviewRequest = {
  uid: 'u-1',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'shop',
  operation: 'CREATE',
  userInfo: { username: 'alice' },
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', labels: { app: 'web' } } },
  dryRun: true,
};

describe('resolveHook', () => {
  it('defaults a validating hook to Fail, a mutating one to Ignore, and to 5 s; gives the function 4.5 s and serves /admit/<name>', () => {
    expect(resolved()).toMatchObject({ path: '/admit/require-team', functionTimeoutMs: 4500, spec: { failurePolicy: 'Fail', timeoutSeconds: 5 } });
    expect(resolved({ type: 'mutating' }).spec.failurePolicy).toBe('Ignore');
  });

  it('reaches a Service function by its cluster DNS name', () => {
    expect(resolved({ function: { service: { name: 'fn', namespace: 'apps', port: 8080 } } }).functionUrl).toBe('http://fn.apps.svc:8080/admit');
  });

  it.each([
    [{ timeoutSeconds: 31 }, 'timeoutSeconds must be an integer from 1 to 30, got 31'],
    [{ timeoutSeconds: 0 }, 'timeoutSeconds must be an integer from 1 to 30, got 0'],
    [{ reinvocationPolicy: 'IfNeeded' as const }, 'reinvocationPolicy applies to mutating hooks only'],
    [{ function: {} }, 'function: give a url or a service'],
    [{ function: { url: 'ftp://x' } }, 'function ftp://x: must be http(s)://<host>'],
    [{ function: { url: 'http://169.254.169.254/latest/meta-data/' } }, 'host 169.254.169.254 is an IP literal'],
    [{ function: { url: 'http://127.0.0.1:8080/admit' } }, 'host 127.0.0.1 is an IP literal'],
    [{ function: { url: 'http://localhost:8080/admit' } }, 'host localhost is loopback'],
    [{ function: { url: 'https://kubernetes.default.svc/api' } }, 'is the Kubernetes API server'],
    [{ function: { url: 'https://fn.example.com/admit' } }, 'is not a cluster Service'],
    [{ rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }] }, 'reaches secrets'],
    [{ context: [{ name: 'w', apiVersion: 'v1', kind: 'Secret', objectName: { value: 'kube-system/token' } }] }, 'is not an object name'],
    [{ context: [{ name: 'w', apiVersion: 'v1', kind: 'Secret', objectName: { value: 'x' }, namespace: 'kube-system/x' }] }, 'namespace must be "Same" or a namespace name'],
    [{ rules: [{ operations: ['*' as const], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] }, 'would send webhook configurations or leases to a webhook'],
  ])('refuses %j with a message for the Ready condition', (spec, message) => {
    const result = resolveHook(hook(spec));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(message);
  });

  it('refuses a hook without a ServiceAccount', () => {
    expect(resolveHook(hook({ serviceAccount: undefined }))).toMatchObject({ ok: false, reason: 'ServiceAccountRequired' });
  });

  it('allows loopback functions and sensitive resources only when the operator says so', () => {
    const policy = { ...DEFAULT_HOOK_POLICY, urlPolicy: { clusterDomain: 'cluster.local', allowedHosts: [], allowLoopback: true }, allowedResources: ['secrets' as const] };
    const spec = { function: { url: 'http://127.0.0.1:8080/admit' }, rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }] };
    expect(resolveHook(hook(spec), policy).ok).toBe(true);
  });
});

describe('buildHookConfigurations', () => {
  const hooks = [resolved({ namespaceSelector: { matchLabels: { 'require-team': 'true' } }, failurePolicy: 'Fail', timeoutSeconds: 3 }), resolved({ type: 'mutating', reinvocationPolicy: 'IfNeeded' }, 'add-team')];
  const built = buildHookConfigurations(hooks, { name: 'kubeloop-admission-hooks', target: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop' } }, caBundlePem: 'PEM', kubeloopNamespace: 'kubeloop' });

  it('puts each hook in the configuration of its type, one path each, with sideEffects None and its policy', () => {
    expect(built.validating.webhooks).toEqual([
      expect.objectContaining({
        name: 'require-team.hooks.kubeloop.dev',
        clientConfig: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop', port: 443, path: '/admit/require-team' }, caBundle: 'UEVN' },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
        timeoutSeconds: 3,
      }),
    ]);
    expect(built.mutating.webhooks).toEqual([expect.objectContaining({ name: 'add-team.hooks.kubeloop.dev', reinvocationPolicy: 'IfNeeded', failurePolicy: 'Ignore' })]);
  });

  it('keeps the hook’s namespace selector and always excludes kube-system and kubeloop', () => {
    expect(built.validating.webhooks?.[0]?.namespaceSelector).toEqual({
      matchLabels: { 'require-team': 'true' },
      matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kubeloop'] }],
    });
  });
});

describe('toReviewResponse', () => {
  const request = toFunctionRequest(review, resolved({ type: 'mutating' }), {}, new Date('2026-11-23T10:00:00Z'));
  const answer = (extra: Record<string, unknown>) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true, ...extra });

  it('passes dryRun and the requested kind to the function', () => {
    expect(request).toMatchObject({ hook: 'require-team', uid: 'u-1', dryRun: true, requestKind: { kind: 'Pod' }, context: {}, now: '2026-11-23T10:00:00.000Z' });
  });

  it('turns a patch into a base64 JSONPatch and keeps warnings and audit annotations', () => {
    const patch = [{ op: 'add', path: '/metadata/labels/team', value: 'platform' }];
    const converted = toReviewResponse(answer({ patch, warnings: ['w'], auditAnnotations: { decision: 'labelled' } }), resolved({ type: 'mutating' }), request);
    expect(converted).toEqual({ ok: true, response: { uid: 'u-1', allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['w'], auditAnnotations: { decision: 'labelled' } } });
  });

  it.each([
    ['a validating hook’s patch', resolved(), answer({ patch: [{ op: 'add', path: '/metadata/labels/x', value: 'y' }] }), 'a validating hook answered a patch'],
    ['a patch that does not apply', resolved({ type: 'mutating' }), answer({ patch: [{ op: 'replace', path: '/spec/nothing/here', value: 1 }] }), 'the patch does not apply to the object'],
    ['a denial without a status', resolved(), { apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false }, "must have required property 'status'"],
    ['an AdmissionReview instead of a kubeloop answer', resolved(), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { allowed: true } }, 'the reply is not an AdmissionResponse'],
  ])('refuses %s as an invalid response', (_case, target, reply, message) => {
    const converted = toReviewResponse(reply, target, request);
    expect(converted.ok).toBe(false);
    if (!converted.ok) expect(converted.failure).toMatchObject({ kind: 'InvalidResponse', message: expect.stringContaining(message) });
  });
});

describe('applyFailurePolicy', () => {
  const failure = { kind: 'Timeout' as const, message: 'did not answer within 4500 ms' };
  it('Ignore admits unchanged with a warning naming the hook and function', () => {
    expect(applyFailurePolicy('u', resolved({ failurePolicy: 'Ignore' }), failure)).toEqual({
      uid: 'u',
      allowed: true,
      warnings: ['admission hook "require-team": function http://fn.shop.svc:8080/admit did not answer within 4500 ms; admitted without this hook (failurePolicy Ignore)'],
    });
  });
  it('Fail rejects with 504 Timeout and the same explanation', () => {
    expect(applyFailurePolicy('u', resolved({ failurePolicy: 'Fail' }), failure)).toEqual({
      uid: 'u',
      allowed: false,
      status: { code: 504, reason: 'Timeout', message: 'admission hook "require-team": function http://fn.shop.svc:8080/admit did not answer within 4500 ms (failurePolicy Fail)' },
    });
  });
});

describe('a request the function could not check', () => {
  const refused = { kind: 'Refused' as const, message: 'answered HTTP 400: request nests deeper than 256 levels' };
  it('is denied by a validating hook even under Ignore', () => {
    expect(applyFailurePolicy('u', resolved({ failurePolicy: 'Ignore' }), refused)).toMatchObject({ allowed: false, status: { code: 400, message: expect.stringContaining('does not admit what its function could not check') } });
  });
  it('follows a mutating hook\'s failure policy', () => {
    expect(applyFailurePolicy('u', resolved({ type: 'mutating' }), refused)).toMatchObject({ allowed: true });
  });
});

describe('context objects', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { annotations: { 'watch.kubeloop.dev/watcher': ' logwatch ' }, labels: { app: 'web' } }, spec: { serviceAccountName: 'builder' } };
  it('names the object by annotation, label, field path or a fixed value', () => {
    expect(contextObjectName({ annotation: 'watch.kubeloop.dev/watcher' }, pod)).toBe('logwatch');
    expect(contextObjectName({ label: 'app' }, pod)).toBe('web');
    expect(contextObjectName({ fieldPath: 'spec.serviceAccountName' }, pod)).toBe('builder');
    expect(contextObjectName({ value: 'fixed' }, pod)).toBe('fixed');
    expect(contextObjectName({ label: 'missing' }, pod)).toBeUndefined();
  });
  it('never takes "<namespace>/<name>" (or anything else that is not an object name) from the admitted object', () => {
    const sneaky = { ...pod, metadata: { annotations: { 'watch.kubeloop.dev/watcher': 'kube-system/token' }, labels: { app: '../x' } } };
    expect(contextObjectName({ annotation: 'watch.kubeloop.dev/watcher' }, sneaky)).toBeUndefined();
    expect(contextObjectName({ label: 'app' }, sneaky)).toBeUndefined();
  });
  it('looks in the admitted object’s namespace unless told otherwise, and nowhere for cluster-scoped kinds', () => {
    expect(contextNamespace({ name: 'w', apiVersion: 'v1', kind: 'X', objectName: { value: 'x' } }, 'shop', true)).toBe('shop');
    expect(contextNamespace({ name: 'w', apiVersion: 'v1', kind: 'X', objectName: { value: 'x' }, namespace: 'policies' }, 'shop', true)).toBe('policies');
    expect(contextNamespace({ name: 'w', apiVersion: 'v1', kind: 'X', objectName: { value: 'x' } }, 'shop', false)).toBeUndefined();
  });
  it('drops managedFields and the spec fields the hook omits', () => {
    const slim = slimContextObject({ apiVersion: 'v1', kind: 'W', metadata: { name: 'w', managedFields: [{}] }, spec: { container: {}, configData: { big: 'x' } } }, ['configData']);
    expect(slim).toEqual({ apiVersion: 'v1', kind: 'W', metadata: { name: 'w' }, spec: { container: {} } });
  });
});
