import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { createRouterMetrics } from '../base/router-metrics.ts';
import type { DispatchResult, FunctionInvoker } from './dispatch.ts';
import { FunctionVersions, type VersionCondition } from './function-versions.ts';

const loop = parseLoop({
  kind: 'ClusterLoop',
  metadata: { name: 'labels' },
  spec: {
    for: { apiVersion: 'v1', kind: 'Pod' },
    serviceAccount: { namespace: 'ns', name: 'sa' },
    function: { url: 'http://live.ns.svc/', shadow: { url: 'http://shadow.ns.svc/', maxConcurrency: 1 } },
  },
});
const request = (name: string): ReconcileRequest =>
  ({ kind: 'ReconcileRequest', apiVersion: 'kubeloop.dev/v1alpha1', loop: 'labels', now: '2026-11-26T00:00:00Z', trigger: { type: 'RESYNC' }, finalizing: false, object: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name, resourceVersion: '1' } }, children: {} }) as unknown as ReconcileRequest;
const labelled = (value: string): DispatchResult => ({ kind: 'ok', status: 200, response: { actions: [{ op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'a' }, patch: [{ op: 'add', path: '/metadata/labels', value: { l: value } }] }] } as ReconcileResponse });

async function count(metrics: ReturnType<typeof createRouterMetrics>, result: string): Promise<number> {
  return (await metrics.shadowCalls.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
}

function versionsWith(invoke: FunctionInvoker) {
  const metrics = createRouterMetrics();
  const conditions: VersionCondition[] = [];
  const versions = new FunctionVersions(loop, { invoke, metrics, logger: pino({ level: 'silent' }) }, { condition: (c) => conditions.push(c), rolledBack: () => {} }, { shadow: () => 'http://shadow.ns.svc/', canary: () => undefined });
  return { versions, metrics, conditions };
}

describe('a Loop shadow', () => {
  it('is offered the call without the reconcile waiting, and drops (and counts) what exceeds its concurrency', async () => {
    let answer: (result: DispatchResult) => void = () => {};
    const { versions, metrics } = versionsWith(() => new Promise((resolve) => (answer = resolve)));
    // called() returns at once although the shadow has not answered: nothing of the live reconcile waits.
    expect(versions.called(request('a'), labelled('x'), undefined)).toBeUndefined();
    versions.called(request('b'), labelled('x'), undefined);
    expect(await count(metrics, 'dropped')).toBe(1);
    answer(labelled('x'));
    await versions.settled();
    expect(await count(metrics, 'agreed')).toBe(1);
  });

  it('compares by effect: a different patch diverges and turns ShadowDiverged True naming the object; a failure diverges too', async () => {
    const { versions, metrics, conditions } = versionsWith(async (r) => (r.object.metadata?.name === 'b' ? labelled('y') : { kind: 'failed', status: 500, reason: 'ServerError', message: 'HTTP 500' }));
    versions.start();
    expect(conditions).toEqual([expect.objectContaining({ type: 'ShadowDiverged', status: 'False', reason: 'NoDivergence' })]);
    versions.called(request('b'), labelled('x'), undefined);
    await versions.settled();
    expect(await count(metrics, 'diverged')).toBe(1);
    expect(conditions.at(-1)).toMatchObject({ type: 'ShadowDiverged', status: 'True', reason: 'Diverged', message: expect.stringContaining('Pod ns/b') });
    versions.called(request('c'), labelled('x'), undefined);
    await versions.settled();
    expect(await count(metrics, 'shadow_failed')).toBe(1);
    // Nothing to compare with when the live call failed.
    versions.called(request('d'), { kind: 'failed', status: 500, reason: 'ServerError', message: 'HTTP 500' }, undefined);
    await versions.settled();
    expect(await count(metrics, 'live_failed')).toBe(1);
  });
});
