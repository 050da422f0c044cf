import { describe, expect, it } from 'vitest';
import { CLUSTER_TENANT } from '../../api/tenant.ts';
import type { KubeObject, ReconcileRequest, ReconcileResponse, RequiredResource } from '../../lib/contract/types.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { KubeApiError } from '../../lib/kube/kube-client.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { callFunction, type CallScope } from './call-rounds.ts';
import type { DispatchResult, InvokeOptions } from './dispatch.ts';
import type { StoreView } from '../base/informer-view.ts';
import { parseRelated } from '../base/related-relation.ts';
import { DEFAULT_REQUEST_CAPS, type RequestCaps } from '../base/request-caps.ts';
import { RequestByteBudget } from '../base/request-byte-budget.ts';
import { requiresProblem, REQUIRES_LIMITS, sameRequirements } from './required-objects.ts';
import { decide } from './reconcile-decision.ts';
import { ReconcileTrace } from './reconcile-trace.ts';

const secrets: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
const primary: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'a' } };
const secret = (name: string): RequiredResource => ({ name: 'db', apiVersion: 'v1', kind: 'Secret', names: [name] });

/** A scope whose function answers with `answer(request)` and whose API holds `objects` (path -> object, or 403). */
function scopeWith(answer: (request: ReconcileRequest) => Partial<ReconcileResponse>, objects: Record<string, KubeObject | 403> = {}, kind = 'ClusterLoop') {
  const sent: ReconcileRequest[] = [];
  const read: string[] = [];
  const kept = new Map<string, readonly RequiredResource[]>();
  const loop = parseLoop({ kind, metadata: { name: 'l', namespace: 'a' }, spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { namespace: 'a', name: 's' }, function: { url: 'http://f.team.svc:80/' } } });
  const client = {
    getIfExists: async ({ path }: { path: string }) => {
      read.push(path);
      const found = objects[path];
      if (found === 403) throw new KubeApiError(403, 'Forbidden', 'no', { method: 'GET', path });
      return found;
    },
  };
  const invoke = async (request: ReconcileRequest): Promise<DispatchResult> => {
    sent.push(request);
    return { kind: 'ok', status: 200, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [], ...answer(request) } };
  };
  const scope = {
    loop,
    caches: { related: [], owned: [] },
    function: {},
    deps: { client, discovery: { resolve: async () => secrets }, invoke, metrics: { functionLatency: { observe() {} }, functionCalls: { inc() {} } } },
  } as unknown as CallScope;
  /** A call as the runner makes it: with what was required last time, keeping what the settled answer required. */
  const call = async () => {
    const outcome = await callFunction(scope, { ...at, required: kept.get(at.key) });
    if (outcome.kind === 'called' && outcome.required) {
      if (outcome.required.entries.length > 0) kept.set(at.key, outcome.required.entries);
      else kept.delete(at.key);
    }
    return outcome;
  };
  return { scope, sent, kept, read, call };
}

// With tracing off (no SDK registered) the trace is the API's no-op one, as in a router without --otlp-endpoint.
const at = { key: 'a/app', primary, trigger: { type: 'ADDED' as const }, finalizing: false, url: 'http://f.team.svc:80/', traced: new ReconcileTrace('app', 'a/app', [], Date.now(), undefined) };
const db: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'a', managedFields: [{}] }, data: { value: 'eA==' } };

describe('callFunction with requires', () => {
  it('calls again with what the answer asked for, and keeps asking on later reconciles without an extra round', async () => {
    const { sent, kept, call } = scopeWith(() => ({ requires: [secret('db')] }), { '/api/v1/namespaces/a/secrets/db': db });
    const outcome = await call();
    expect(outcome.kind).toBe('called');
    // The settled answer's requirements are returned, for the runner to keep: the call writes nothing itself.
    expect(outcome).toMatchObject({ required: { entries: [secret('db')], resolved: [{ name: 'db', kind: 'Secret.v1', namespace: 'a' }] } });
    expect(sent).toHaveLength(2);
    expect(sent[0]?.related).toBeUndefined();
    expect(sent[1]?.related).toEqual({ db: [{ ...db, metadata: { name: 'db', namespace: 'a' } }] });
    expect(kept.get('a/app')).toEqual([secret('db')]);
    await call();
    expect(sent).toHaveLength(3);
    expect(sent[2]?.related?.db).toHaveLength(1);
  });

  it('sends [] for a required name that does not exist, and stops watching once an answer no longer asks', async () => {
    let ask = true;
    const { sent, kept, call } = scopeWith(() => (ask ? { requires: [secret('absent')] } : {}));
    await call();
    expect(sent[1]?.related).toEqual({ db: [] });
    ask = false;
    await call();
    expect(kept.has('a/app')).toBe(false);
  });

  it(`stops after ${REQUIRES_LIMITS.calls} calls when every answer asks for something else`, async () => {
    let n = 0;
    const { scope, sent } = scopeWith(() => ({ requires: [secret(`s${n++}`)] }));
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'RequiresExceeded' });
    expect(outcome).not.toHaveProperty('required');
    expect(sent).toHaveLength(REQUIRES_LIMITS.calls);
  });

  it('is Forbidden, naming the kind and namespace, when the ServiceAccount may not read what was asked', async () => {
    const { scope, sent } = scopeWith(() => ({ requires: [secret('db')] }), { '/api/v1/namespaces/a/secrets/db': 403 });
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'Forbidden' });
    if (outcome.kind === 'requires-failed') expect(outcome.message).toContain('secrets in namespace a');
    expect(sent).toHaveLength(1);
  });
});

describe('callFunction with requires of a namespaced Loop', () => {
  it('refuses an entry in another namespace as RequiresInvalid before reading it, and reads its own namespace', async () => {
    const elsewhere = { ...secret('db'), namespace: 'b' };
    const { scope, sent, read } = scopeWith(() => ({ requires: [elsewhere] }), { '/api/v1/namespaces/b/secrets/db': db }, 'Loop');
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'RequiresInvalid', message: `requires "db" (Secret): b is not the Loop's namespace: a Loop reads only in its own namespace (a)` });
    expect(read).toEqual([]);
    expect(sent[0]).toMatchObject({ loop: 'l', loopNamespace: 'a' });
    const own = scopeWith(() => ({ requires: [secret('db')] }), { '/api/v1/namespaces/a/secrets/db': db }, 'Loop');
    expect((await callFunction(own.scope, at)).kind).toBe('called');
  });
});

describe('requires bounds and comparison', () => {
  it('refuses too many entries, duplicate names and names of spec.related entries', () => {
    const many = Array.from({ length: REQUIRES_LIMITS.entries + 1 }, (_, i) => ({ ...secret('x'), name: `e${i}` }));
    expect(requiresProblem(many, new Set())?.reason).toBe('RequiresExceeded');
    expect(requiresProblem([secret('a'), secret('b')], new Set())?.message).toMatch(/named twice/);
    expect(requiresProblem([secret('a')], new Set(['db']))?.message).toMatch(/spec\.related/);
    expect(requiresProblem([secret('a')], new Set())).toBeUndefined();
  });
  it('compares entries without regard to order', () => {
    const other = { ...secret('b'), name: 'other' };
    expect(sameRequirements([secret('a'), other], [other, secret('a')])).toBe(true);
    expect(sameRequirements([secret('a')], [secret('b')])).toBe(false);
  });
  it('a requires failure backs off, warns and marks the Loop not ready', () => {
    const decision = decide({ stage: 'requires-failed', reason: 'RequiresExceeded', message: 'too many' });
    expect(decision.step).toEqual({ kind: 'backoff' });
    expect(decision.warning?.reason).toBe('RequiresExceeded');
    expect(decision.health).toMatchObject({ ready: false, reason: 'RequiresExceeded' });
  });
});

describe('request caps and the request bytes in flight', () => {
  const configMap = (name: string, bytes: number): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'a' }, data: { blob: 'x'.repeat(bytes) } } as KubeObject);
  /** A scope whose Loop relates every ConfigMap of the primary's namespace, `fields` projecting them when given. */
  function relatedScope(objects: KubeObject[], caps: Partial<RequestCaps>, fields?: string[]) {
    const base = scopeWith(() => ({}));
    const [relation] = parseRelated([{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', ...(fields ? { fields } : {}) }]);
    const store: StoreView = { get: () => undefined, list: () => objects, byIndex: () => objects, size: objects.length };
    let refused = 0;
    const budget = new RequestByteBudget(1024 * 1024);
    const seenInFlight: number[] = [];
    const invoke = base.scope.deps.invoke;
    Object.assign(base.scope.caches, { related: [{ relation: relation!, store, namespaced: true }] });
    Object.assign(base.scope.deps, {
      requestCaps: { ...DEFAULT_REQUEST_CAPS, ...caps },
      requestBytes: budget,
      metrics: { ...base.scope.deps.metrics, requestsTooLarge: { inc: () => (refused += 1) } },
      invoke: (request: ReconcileRequest, options: InvokeOptions) => (seenInFlight.push(budget.tenantInFlight(CLUSTER_TENANT)), invoke(request, options)),
    });
    return { ...base, budget, seenInFlight, refused: () => refused };
  }

  it('never builds or sends a request whose related objects are over the byte cap: RequestTooLarge and the metric', async () => {
    const { scope, sent, refused } = relatedScope([configMap('one', 600), configMap('two', 600)], { relatedBytesPerRequest: 1000 });
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'RequestTooLarge', request: undefined });
    if (outcome.kind === 'requires-failed') expect(outcome.message).toContain('--max-related-bytes-per-request');
    expect(sent).toHaveLength(0);
    expect(refused()).toBe(1);
  });

  it('counts an entry before projecting it, and measures a projection as what it sends', async () => {
    const many = relatedScope([configMap('one', 1), configMap('two', 1), configMap('three', 1)], { objectsPerEntry: 2 });
    expect(await callFunction(many.scope, at)).toMatchObject({ reason: 'RequestTooLarge', message: expect.stringContaining('selects 3 objects; at most 2 per entry') });
    // The same large objects projected to their metadata fit the byte cap they would break whole.
    const projected = relatedScope([configMap('one', 600), configMap('two', 600)], { relatedBytesPerRequest: 1000 }, ['metadata.labels']);
    expect((await callFunction(projected.scope, at)).kind).toBe('called');
    expect(projected.sent[0]?.related?.cfg?.map((o) => o.metadata?.name)).toEqual(['one', 'two']);
  });

  it('holds the request bytes in flight for the tenant while the call is out, and releases them after', async () => {
    const { scope, budget, seenInFlight } = relatedScope([configMap('one', 600)], {});
    expect((await callFunction(scope, at)).kind).toBe('called');
    expect(seenInFlight[0]).toBeGreaterThan(600);
    expect(budget.inFlight).toBe(0);
  });

  it('counts required objects against the same caps as the declared ones', async () => {
    const { scope, sent } = scopeWith(() => ({ requires: [{ ...secret('db'), names: ['db', 'db2'] }] }), { '/api/v1/namespaces/a/secrets/db': db, '/api/v1/namespaces/a/secrets/db2': { ...db, metadata: { name: 'db2', namespace: 'a' } } });
    Object.assign(scope.deps, { requestCaps: { ...DEFAULT_REQUEST_CAPS, objectsPerRequest: 1 }, metrics: { ...scope.deps.metrics, requestsTooLarge: { inc() {} } } });
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'RequestTooLarge', message: expect.stringContaining('would number 2; at most 1 per request') });
    expect(sent).toHaveLength(1);
  });

  it('a RequestTooLarge backs off, warns and marks the Loop not ready with that reason', () => {
    const decision = decide({ stage: 'requires-failed', reason: 'RequestTooLarge', message: 'too large' });
    expect(decision.step).toEqual({ kind: 'backoff' });
    expect(decision.warning?.reason).toBe('RequestTooLarge');
    expect(decision.health).toMatchObject({ ready: false, reason: 'RequestTooLarge' });
  });
});
