// The gateway's namespaced-hook routes over HTTP, with a real function behind them: a group path dispatches by
// the request's namespace, a namespace without a hook there is admitted with a warning, and a tenant over its
// cap of calls in flight gets its hook's failure policy (counted) while another tenant is still served.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHookSpec } from '../../api/admission-hook.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import { registerAdmissionGateway } from '../gateway/admission-gateway.ts';
import { FunctionCaller } from '../gateway/function-caller.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';
import { servedHooksOf } from './served-hooks.ts';
import { NO_CONTEXT } from '../gateway/context-cache.ts';

let fn: Server;
let fnUrl: string;
let app: FastifyInstance;
let caller: FunctionCaller;
let group: string;
const metrics = createMetricsRegistry();
/** Calls the function holds until released, and the namespaces it was called for. */
const held: Array<() => void> = [];
const seen: string[] = [];

/** An admission function that answers only when the test releases it (functions built with the SDK are synchronous). */
function slowFunction(): Server {
  return createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push((JSON.parse(body) as { namespace?: string }).namespace ?? '');
      held.push(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true })));
    });
  });
}

function hookIn(namespace: string, spec: Partial<AdmissionHookSpec> = {}): ResolvedHook {
  const result = resolveHook(
    {
      metadata: { name: 'gate', namespace },
      spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], function: { url: `${fnUrl}/admit` }, serviceAccount: { namespace, name: 'gate' }, ...spec },
    },
    DEV_HOOK_POLICY,
  );
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

const review = (namespace: string, uid: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    namespace,
    name: uid,
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: uid, namespace } },
  },
});

type Answer = { response: { uid: string; allowed: boolean; status?: { code?: number; message?: string }; warnings?: string[] } };
const post = async (path: string, namespace: string, uid: string): Promise<Answer> => (await app.inject({ method: 'POST', url: path, payload: review(namespace, uid) })).json<Answer>();

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

beforeAll(async () => {
  fn = slowFunction();
  await new Promise<void>((resolve) => fn.listen(0, '127.0.0.1', resolve));
  fnUrl = `http://127.0.0.1:${(fn.address() as AddressInfo).port}`;
  const { served, grouping } = servedHooksOf([hookIn('team-a'), hookIn('team-b')], new Map());
  group = grouping.groups[0]!.id;
  caller = new FunctionCaller();
  app = Fastify();
  registerAdmissionGateway(app, { hooks: () => served.byId, groups: () => served.groups, tenantMaxInFlight: 2, contexts: NO_CONTEXT, caller, metrics, reportCall: () => {} });
  await app.ready();
});

afterAll(async () => {
  for (const release of held) release();
  await app?.close();
  await caller?.close();
  await new Promise((resolve) => fn?.close(resolve));
});

describe('the namespaced hooks route', () => {
  it("caps a tenant's calls in flight: the third of team-a is denied by its Fail policy with 429, team-b's is still called", async () => {
    const path = `/admit-namespaced/${group}`;
    const running = [post(path, 'team-a', 'a1'), post(path, 'team-a', 'a2')];
    await until(() => held.length === 2);
    const over = await post(path, 'team-a', 'a3');
    expect(over.response).toMatchObject({ uid: 'a3', allowed: false, status: { code: 429, message: expect.stringContaining('tenant "team-a" has 2 admission calls in flight') } });
    const other = post(path, 'team-b', 'b1');
    await until(() => held.length === 3);
    for (const release of held.splice(0)) release();
    expect((await Promise.all([...running, other])).map((answer) => answer.response.allowed)).toEqual([true, true, true]);
    expect(seen).toEqual(['team-a', 'team-a', 'team-b']);
    const text = await metrics.metrics();
    expect(text).toContain('kubeloop_admission_tenant_throttled_total{tenant="team-a",policy="Fail"} 1');
    expect(text).toContain('kubeloop_admission_hook_failures_total{hook="team-a/gate",reason="Throttled",policy="Fail"} 1');
    expect(text).toContain('kubeloop_admission_tenant_calls_in_flight{tenant="team-a"} 0');
  });

  it('admits a request of a namespace without a hook in the group with a warning, and never serves a namespaced hook by name', async () => {
    const answer = await post(`/admit-namespaced/${group}`, 'team-c', 'c1');
    expect(answer.response).toMatchObject({ allowed: true, warnings: [expect.stringContaining(`no AdmissionHook of webhook group ${group} in namespace "team-c"`)] });
    const byName = await post(`/admit/${encodeURIComponent('team-a/gate')}`, 'team-a', 'n1');
    expect(byName.response).toMatchObject({ allowed: true, warnings: [expect.stringContaining('is not served by this gateway')] });
    expect(seen).not.toContain('team-c');
  });
});
