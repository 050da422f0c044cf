import { describe, expect, it } from 'vitest';
import type { KubeObject, ReconcileRequest, ReconcileResponse, RequiredResource } from '../../lib/contract/types.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { KubeApiError } from '../../lib/kube/kube-client.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { callFunction, type CallScope, type Requirements } from './call-rounds.ts';
import type { DispatchResult } from './dispatch.ts';
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
  const requirements: Requirements = { get: (key) => kept.get(key), set: (key, entries) => void (entries.length ? kept.set(key, entries) : kept.delete(key)) };
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
    related: [],
    owned: [],
    requirements,
    deps: { client, discovery: { resolve: async () => secrets }, invoke, metrics: { functionLatency: { observe() {} }, functionCalls: { inc() {} } } },
  } as unknown as CallScope;
  return { scope, sent, kept, read };
}

// With tracing off (no SDK registered) the trace is the API's no-op one, as in a router without --otlp-endpoint.
const at = { key: 'a/app', primary, trigger: { type: 'ADDED' as const }, finalizing: false, url: 'http://f.team.svc:80/', traced: new ReconcileTrace('app', 'a/app', [], Date.now(), undefined) };
const db: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'a', managedFields: [{}] }, data: { value: 'eA==' } };

describe('callFunction with requires', () => {
  it('calls again with what the answer asked for, and keeps asking on later reconciles without an extra round', async () => {
    const { scope, sent, kept } = scopeWith(() => ({ requires: [secret('db')] }), { '/api/v1/namespaces/a/secrets/db': db });
    const outcome = await callFunction(scope, at);
    expect(outcome.kind).toBe('called');
    expect(sent).toHaveLength(2);
    expect(sent[0]?.related).toBeUndefined();
    expect(sent[1]?.related).toEqual({ db: [{ ...db, metadata: { name: 'db', namespace: 'a' } }] });
    expect(kept.get('a/app')).toEqual([secret('db')]);
    await callFunction(scope, at);
    expect(sent).toHaveLength(3);
    expect(sent[2]?.related?.db).toHaveLength(1);
  });

  it('sends [] for a required name that does not exist, and stops watching once an answer no longer asks', async () => {
    let ask = true;
    const { scope, sent, kept } = scopeWith(() => (ask ? { requires: [secret('absent')] } : {}));
    await callFunction(scope, at);
    expect(sent[1]?.related).toEqual({ db: [] });
    ask = false;
    await callFunction(scope, at);
    expect(kept.has('a/app')).toBe(false);
  });

  it(`stops after ${REQUIRES_LIMITS.calls} calls when every answer asks for something else`, async () => {
    let n = 0;
    const { scope, sent } = scopeWith(() => ({ requires: [secret(`s${n++}`)] }));
    const outcome = await callFunction(scope, at);
    expect(outcome).toMatchObject({ kind: 'requires-failed', reason: 'RequiresExceeded' });
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
