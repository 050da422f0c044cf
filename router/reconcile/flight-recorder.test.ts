import { describe, expect, it } from 'vitest';
import { FlightRecorder, type ReconcileRecord } from './flight-recorder.ts';

const entry = (outcome: string): ReconcileRecord => ({ startedAt: '2026-01-01T00:00:00.000Z', triggers: [], actions: [], writes: [], outcome, durations: { queueMs: 0, totalMs: 1 } });

describe('FlightRecorder', () => {
  it('keeps the last N reconciles of an object, oldest first', () => {
    const recorder = new FlightRecorder({ perObject: 2, objects: 10 });
    for (const outcome of ['a', 'b', 'c']) recorder.record('podsets', 'default/web', entry(outcome));
    expect(recorder.history('podsets', 'default/web').map((e) => e.outcome)).toEqual(['b', 'c']);
    expect(recorder.history('other-loop', 'default/web')).toEqual([]);
  });

  it('drops the least recently reconciled object when it holds too many', () => {
    const recorder = new FlightRecorder({ perObject: 3, objects: 2 });
    recorder.record('l', 'ns/a', entry('a1'));
    recorder.record('l', 'ns/b', entry('b1'));
    recorder.record('l', 'ns/a', entry('a2'));
    recorder.record('l', 'ns/c', entry('c1'));
    expect(recorder.objects).toBe(2);
    expect(recorder.history('l', 'ns/b')).toEqual([]);
    expect(recorder.history('l', 'ns/a').map((e) => e.outcome)).toEqual(['a1', 'a2']);
  });

  it('keeps the request of the latest entry only (older ones would pin replaced objects)', () => {
    const recorder = new FlightRecorder({ perObject: 3, objects: 10 });
    const request = (rv: string) => ({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ReconcileRequest', loop: 'l', trigger: { type: 'MODIFIED' }, object: { metadata: { resourceVersion: rv } }, children: {}, now: '' }) as unknown as ReconcileRecord['request'];
    recorder.record('l', 'ns/a', { ...entry('a1'), request: request('1') });
    recorder.record('l', 'ns/a', { ...entry('a2'), request: request('2') });
    recorder.record('l', 'ns/a', entry('own-write-seen'));
    expect(recorder.history('l', 'ns/a').map((e) => e.request?.object.metadata?.resourceVersion)).toEqual([undefined, '2', undefined]);
  });

  it("keeps team b's history while team a reconciles more objects than the recorder holds", () => {
    const recorder = new FlightRecorder({ perObject: 10, objects: 1000, objectsPerTenant: 1000 });
    for (let i = 0; i < 10; i += 1) recorder.record('team-b/copier', `team-b/cm-${i}`, entry(`b${i}`));
    for (let i = 0; i < 1100; i += 1) recorder.record('team-a/copier', `team-a/cm-${i}`, entry(`a${i}`));
    expect(recorder.objects).toBe(1000);
    for (let i = 0; i < 10; i += 1) expect(recorder.history('team-b/copier', `team-b/cm-${i}`).map((e) => e.outcome)).toEqual([`b${i}`]);
    // Team a's own least recently reconciled went: it holds 990, its latest ones.
    expect(recorder.history('team-a/copier', 'team-a/cm-109')).toEqual([]);
    expect(recorder.history('team-a/copier', 'team-a/cm-110').map((e) => e.outcome)).toEqual(['a110']);
  });

  it('holds a tenant to its own bound even when the recorder has room, and counts all ClusterLoops as one tenant', () => {
    const recorder = new FlightRecorder({ perObject: 10, objects: 100, objectsPerTenant: 3 });
    for (const key of ['ns/a', 'ns/b', 'ns/c', 'ns/d']) recorder.record('podset', key, entry(key));
    recorder.record('other-cluster-loop', 'ns/e', entry('e'));
    expect(recorder.objects).toBe(3);
    expect(recorder.history('podset', 'ns/a')).toEqual([]);
    expect(recorder.history('podset', 'ns/b')).toEqual([]);
    expect(recorder.history('other-cluster-loop', 'ns/e').map((e) => e.outcome)).toEqual(['e']);
    // A namespace named cluster is its own tenant: it evicts none of the ClusterLoops' objects.
    for (const key of ['cluster/a', 'cluster/b', 'cluster/c']) recorder.record('cluster/x', key, entry(key));
    expect(recorder.history('podset', 'ns/d').map((e) => e.outcome)).toEqual(['ns/d']);
  });

  it('records nothing when turned off', () => {
    const recorder = new FlightRecorder({ perObject: 0, objects: 10 });
    recorder.record('l', 'ns/a', entry('a'));
    expect(recorder.enabled).toBe(false);
    expect(recorder.objects).toBe(0);
  });
});
