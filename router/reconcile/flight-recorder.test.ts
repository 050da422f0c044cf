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

  it('records nothing when turned off', () => {
    const recorder = new FlightRecorder({ perObject: 0, objects: 10 });
    recorder.record('l', 'ns/a', entry('a'));
    expect(recorder.enabled).toBe(false);
    expect(recorder.objects).toBe(0);
  });
});
