// What bounds a namespaced AdmissionHook, through the gateway's own code paths: the rule table and the timeout
// cap in resolveHook, the excluded identities on namespaced entries only, and the circuit breaker over HTTP.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import { registerAdmissionGateway } from '../gateway/admission-gateway.ts';
import { excludedIdentitiesCondition, parseExcludedIdentities, DEFAULT_EXCLUDED_IDENTITIES } from '../base/excluded-identities.ts';
import { FunctionCaller } from '../gateway/function-caller.ts';
import { buildHookConfigurations } from './hook-configuration.ts';
import { groupNamespacedHooks } from '../base/hook-groups.ts';
import { DEFAULT_HOOK_POLICY, DEV_HOOK_POLICY, resolveHook, type HookPolicy, type ResolvedHook } from '../base/hook-spec.ts';
import { servedHooksOf } from './served-hooks.ts';

const spec = (more: Partial<AdmissionHookSpec> = {}): AdmissionHookSpec => ({
  type: 'validating',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  function: { service: { name: 'fn', namespace: 'team-a' } },
  serviceAccount: { namespace: 'team-a', name: 'hook' },
  ...more,
});
const hook = (namespace: string | undefined, more: Partial<AdmissionHookSpec> = {}): AdmissionHook => ({ metadata: { name: 'h', ...(namespace ? { namespace } : {}) }, spec: spec({ ...(namespace ? {} : { serviceAccount: { namespace: 'x', name: 'y' } }), ...more }) });
const resolved = (namespace: string | undefined, more: Partial<AdmissionHookSpec> = {}, policy: HookPolicy = DEFAULT_HOOK_POLICY): ResolvedHook => {
  const result = resolveHook(hook(namespace, more), policy);
  if (!result.ok) throw new Error(result.message);
  return result.hook;
};
const refusal = (namespace: string | undefined, more: Partial<AdmissionHookSpec>, policy: HookPolicy = DEFAULT_HOOK_POLICY): string => {
  const result = resolveHook(hook(namespace, more), policy);
  return result.ok ? 'resolved' : `${result.reason}: ${result.message}`;
};

describe('a namespaced hook through resolveHook', () => {
  it('waits 3 s by default and at most the operator\'s cap; a ClusterAdmissionHook keeps 5 and up to 30', () => {
    expect(resolved('team-a').spec.timeoutSeconds).toBe(3);
    expect(refusal('team-a', { timeoutSeconds: 30 })).toBe('InvalidSpec: timeoutSeconds must be an integer from 1 to 3 (a namespaced AdmissionHook waits at most 3 s: the operator\'s --namespaced-hook-max-timeout-seconds), got 30');
    expect(resolved('team-a', { timeoutSeconds: 8 }, { ...DEFAULT_HOOK_POLICY, namespacedMaxTimeoutSeconds: 10 }).spec.timeoutSeconds).toBe(8);
    expect(resolved('team-a', {}, { ...DEFAULT_HOOK_POLICY, namespacedMaxTimeoutSeconds: 10 }).spec.timeoutSeconds).toBe(5);
    expect(resolved(undefined).spec.timeoutSeconds).toBe(5);
    expect(resolved(undefined, { timeoutSeconds: 30 }).spec.timeoutSeconds).toBe(30);
  });

  it('is InvalidSpec naming the rule for quota status, EndpointSlices and a mutating wildcard; a ClusterAdmissionHook may match them', () => {
    const quota = { type: 'mutating' as const, rules: [{ operations: ['UPDATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['resourcequotas/status'] }] };
    expect(refusal('team-a', quota)).toMatch(/^InvalidSpec: rules\[0\]: resource "resourcequotas\/status" reaches a status subresource/);
    const slices = { type: 'mutating' as const, rules: [{ operations: ['*' as const], apiGroups: ['discovery.k8s.io'], apiVersions: ['v1'], resources: ['endpointslices'] }] };
    expect(refusal('team-a', slices)).toContain('rules[0]: resource "endpointslices" reaches endpointslices.discovery.k8s.io');
    expect(refusal('team-a', { type: 'mutating', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['*'] }] })).toContain('is a wildcard');
    expect(refusal(undefined, quota)).toBe('resolved');
    expect(refusal(undefined, slices)).toBe('resolved');
  });
});

describe('the excluded identities on the webhook configuration', () => {
  it('are ANDed after a namespaced hook\'s own conditions and never added to a ClusterAdmissionHook', () => {
    const namespacedCondition = excludedIdentitiesCondition(parseExcludedIdentities(DEFAULT_EXCLUDED_IDENTITIES, 's'))!;
    const own = { name: 'own', expression: 'true' };
    const hooks = [resolved('team-a', { matchConditions: [own] }), resolved(undefined)];
    const built = buildHookConfigurations(hooks, { name: 'c', target: { urlBase: 'https://127.0.0.1:1' }, kubeloopNamespace: 'k', namespacedCondition }, groupNamespacedHooks(hooks).groups);
    const [cluster, namespaced] = built.validating.webhooks!;
    expect(cluster!.matchConditions).toBeUndefined();
    expect(namespaced!.matchConditions).toEqual([own, namespacedCondition]);
  });
});

describe('the circuit breaker over HTTP', () => {
  let fn: Server;
  let app: FastifyInstance;
  let caller: FunctionCaller;
  let calls = 0;
  let now = 0;
  const conditions: ConditionInput[] = [];
  const metrics = createMetricsRegistry();
  let group = '';

  beforeAll(async () => {
    // A function that fails every call at once (a dead one times out the same way, only slower).
    fn = createServer((_, response) => {
      calls += 1;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => fn.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(fn.address() as AddressInfo).port}/admit`;
    const { served, grouping } = servedHooksOf([resolved('team-a', { function: { url }, failurePolicy: 'Fail' }, DEV_HOOK_POLICY)], new Map());
    group = grouping.groups[0]!.id;
    caller = new FunctionCaller();
    app = Fastify();
    registerAdmissionGateway(app, {
      hooks: () => served.byId,
      groups: () => served.groups,
      breaker: { threshold: 3, coolDownMs: 30_000 },
      now: () => new Date(now),
      contexts: { lookup: () => ({ ok: true, context: {}, bytes: 0 }) },
      caller,
      metrics,
      reportCall: () => {},
      reportCondition: (_, condition) => conditions.push(condition),
    });
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await caller?.close();
    await new Promise((resolve) => fn?.close(resolve));
  });

  const admit = async (uid: string) =>
    (
      await app.inject({
        method: 'POST',
        url: `/admit-namespaced/${group}`,
        payload: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'team-a', name: uid, operation: 'CREATE', userInfo: { username: 'alice' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: uid, namespace: 'team-a' } } } },
      })
    ).json<{ response: { allowed: boolean; status?: { code?: number; message?: string } } }>().response;

  it('answers by the failure policy without calling after 3 failures, says so on the hook, probes after the cool-down', async () => {
    for (const uid of ['a', 'b', 'c']) expect(await admit(uid)).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(calls).toBe(3);
    expect(conditions).toEqual([expect.objectContaining({ type: 'CircuitOpen', status: 'True', reason: 'ConsecutiveFailures', message: expect.stringContaining('answered by failurePolicy Fail without calling it') })]);
    expect(await admit('d')).toMatchObject({ allowed: false, status: { code: 503, message: expect.stringContaining('was not called: its last 3 calls failed') } });
    expect(calls).toBe(3);
    const text = await metrics.metrics();
    expect(text).toContain('kubeloop_admission_hook_circuit_open{hook="team-a/h"} 1');
    expect(text).toContain('kubeloop_admission_hook_short_circuited_total{hook="team-a/h",policy="Fail"} 1');
    now += 30_000;
    expect(await admit('probe')).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(calls).toBe(4);
    expect(await admit('e')).toMatchObject({ status: { code: 503 } });
    expect(calls).toBe(4);
  });
});
