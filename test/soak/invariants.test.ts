import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { At } from '../../api/at.ts';
import type { PodSet } from '../../api/podset.ts';
import {
  checkAts,
  checkPodLabels,
  checkPodSets,
  checkSidecars,
  LABEL_ANNOTATION,
  NAME_LABEL,
  podSetBoundViolation,
  ReplicasHistory,
  slopeMiBPerMinute,
  growthViolation,
  sidecarExpected,
  type SidecarRules,
} from './invariants.ts';

const pod = (name: string, extra: { annotated?: boolean; label?: string; owner?: string; phase?: string; deleting?: boolean } = {}): V1Pod => ({
  metadata: {
    name,
    ...(extra.annotated ? { annotations: { [LABEL_ANNOTATION]: 'true' } } : {}),
    ...(extra.label ? { labels: { [NAME_LABEL]: extra.label } } : {}),
    ...(extra.owner ? { ownerReferences: [{ apiVersion: 'x/v1', kind: 'X', name: 'o', uid: extra.owner, controller: true }] } : {}),
    ...(extra.deleting ? { deletionTimestamp: new Date() } : {}),
  },
  status: { phase: extra.phase ?? 'Running' },
});

describe('pod labels', () => {
  it('passes annotated pods labelled with their own name and plain pods without the label', () => {
    expect(checkPodLabels([pod('a', { annotated: true, label: 'a' }), pod('b')], 1)).toEqual([]);
  });

  it('flags an annotated pod without the label, a wrong label, and a labelled unannotated pod', () => {
    const found = checkPodLabels([pod('a', { annotated: true }), pod('b', { annotated: true, label: 'x' }), pod('c', { label: 'c' })], 5);
    expect(found.map((v) => v.detail)).toEqual([
      `annotated pod a has no ${NAME_LABEL} label`,
      `pod b labelled ${NAME_LABEL}=x`,
      `unannotated pod c carries ${NAME_LABEL}=c`,
    ]);
    expect(found.every((v) => v.invariant === 'pod-label' && v.atMs === 5)).toBe(true);
  });

  it('ignores pods being deleted', () => {
    expect(checkPodLabels([pod('a', { annotated: true, deleting: true })], 1)).toEqual([]);
  });
});

describe('PodSet bound', () => {
  it('allows the largest replicas in force within the window before a pod appeared', () => {
    const h = new ReplicasHistory();
    h.record('u', 0, 5);
    h.record('u', 10_000, 2);
    // Scaled down at 10 s: a pod created from the older spec at 12 s is within a 10 s window.
    expect(h.maxWithin('u', 12_000, 10_000)).toBe(5);
    expect(h.maxWithin('u', 25_000, 10_000)).toBe(2);
    expect(h.maxWithin('other', 1, 10_000)).toBeUndefined();
  });

  it('does not count a value that was only set after the moment judged', () => {
    const h = new ReplicasHistory();
    h.record('u', 0, 2);
    h.record('u', 20_000, 8);
    expect(h.maxWithin('u', 15_000, 10_000)).toBe(2);
  });

  it("holds pods made for a spec only the churn's own writes recorded, which a lagging watch never showed", () => {
    // CI, seed 7: created with 10 replicas at 1 s and scaled to 5 at 2 s as a restarted API server came back; the
    // watch, behind, showed only the 5 (at 9 s). The router's ten pods, seen at 4 s, were made for the 10 in force.
    const h = new ReplicasHistory();
    h.record('u', 1000, 10);
    h.record('u', 2000, 5);
    h.record('u', 9000, 5);
    expect(h.maxWithin('u', 4000 + 3000, 13_000)).toBe(10);
    // What the watch alone knew: 5, and the ten pods read as an overshoot.
    const watchOnly = new ReplicasHistory();
    watchOnly.record('u', 9000, 5);
    expect(watchOnly.maxWithin('u', 4000 + 3000, 13_000)).toBeUndefined();
  });

  it('reports more live pods than allowed, and nothing for a PodSet never seen', () => {
    expect(podSetBoundViolation('ps', 4, 3, 9)).toEqual({ atMs: 9, invariant: 'podset-bound', detail: 'PodSet ps observed with 4 live pods, spec.replicas 3' });
    expect(podSetBoundViolation('ps', 3, 3, 9)).toBeUndefined();
    expect(podSetBoundViolation('ps', 3, undefined, 9)).toBeUndefined();
  });
});

describe('PodSet convergence', () => {
  const podset = (replicas: number, status: PodSet['status'], generation = 2): PodSet => ({ metadata: { name: 'ps', uid: 'u', generation }, spec: { replicas }, status });

  it('passes a PodSet with its replicas live and a status that lists them', () => {
    const pods = [pod('p1', { owner: 'u' }), pod('p2', { owner: 'u' }), pod('p3', { owner: 'u', deleting: true }), pod('p4', { owner: 'u', phase: 'Succeeded' })];
    expect(checkPodSets([podset(2, { availableReplicas: 2, podNames: ['p1', 'p2'], observedGeneration: 2 })], pods, 1)).toEqual([]);
  });

  it('names every way a PodSet is off', () => {
    const [v] = checkPodSets([podset(3, { availableReplicas: 2, podNames: ['p1'], observedGeneration: 1 })], [pod('p1', { owner: 'u' }), pod('p2', { owner: 'u' })], 1);
    expect(v?.detail).toBe('PodSet ps (replicas 3): 2 live pods; status.availableReplicas 2; status.podNames [p1] != [p1,p2]; observedGeneration 1 != generation 2');
  });
});

describe('Ats', () => {
  const at = (name: string, scheduleMs: number, phase?: string): At => ({
    metadata: { name, uid: name },
    spec: { schedule: new Date(scheduleMs).toISOString(), command: 'true' },
    ...(phase ? { status: { phase: phase as 'DONE' } } : {}),
  });

  it('judges only Ats due longer ago than the grace', () => {
    expect(checkAts([at('a', 100_000)], [], 110_000, 15_000, 1)).toEqual([]);
    expect(checkAts([at('a', 100_000, 'RUNNING')], [], 120_000, 15_000, 1)[0]?.detail).toMatch(/At a due .* is RUNNING/);
  });

  it('wants DONE with a finished pod', () => {
    expect(checkAts([at('a', 0, 'DONE')], [pod('a-pod', { owner: 'a', phase: 'Succeeded' })], 60_000, 15_000, 1)).toEqual([]);
    expect(checkAts([at('a', 0, 'DONE')], [], 60_000, 15_000, 1)[0]?.detail).toBe('At a is DONE but its pod is missing');
  });
});

describe('sidecars', () => {
  const rules: SidecarRules = { watchers: new Map([['w', { image: 'img-w', createdMs: 1000 }]]), minWatcherAgeMs: 3000, webhookKillsMs: [20_000] };

  it('owes a sidecar only when the Watcher was old enough and no webhook replica died during the create', () => {
    expect(sidecarExpected({ pod: 'p', watcher: 'w', startMs: 5000, endMs: 5100 }, rules)).toBe(true);
    expect(sidecarExpected({ pod: 'p', watcher: 'w', startMs: 2000, endMs: 2100 }, rules)).toBe(false);
    expect(sidecarExpected({ pod: 'p', watcher: 'w', startMs: 19_990, endMs: 20_050 }, rules)).toBe(false);
    expect(sidecarExpected({ pod: 'p', watcher: 'unknown', startMs: 5000, endMs: 5100 }, rules)).toBe(false);
  });

  it('flags a missing sidecar where it was owed, and a doubled one always', () => {
    const creates = [
      { pod: 'ok', watcher: 'w', startMs: 5000, endMs: 5100 },
      { pod: 'missing', watcher: 'w', startMs: 6000, endMs: 6100 },
      { pod: 'excused', watcher: 'w', startMs: 19_990, endMs: 20_050 },
      { pod: 'twice', watcher: 'w', startMs: 2000, endMs: 2100 },
    ];
    const seen = new Map([
      ['ok', { images: ['main', 'img-w'] }],
      ['missing', { images: ['main'] }],
      ['excused', { images: ['main'] }],
      ['twice', { images: ['main', 'img-w', 'img-w'] }],
    ]);
    expect(checkSidecars(creates, seen, rules).map((v) => v.detail)).toEqual([
      'pod missing naming Watcher w was created while the webhook was up, without the sidecar',
      'pod twice carries the w sidecar 2 times',
    ]);
  });
});

describe('memory growth', () => {
  const MiB = 1024 * 1024;
  it('measures the slope in MiB per minute', () => {
    const samples = Array.from({ length: 11 }, (_, i) => ({ atMs: i * 6000, bytes: 100 * MiB + i * 0.2 * MiB }));
    expect(slopeMiBPerMinute(samples)).toBeCloseTo(2, 5);
    expect(slopeMiBPerMinute(samples.slice(0, 1))).toBe(0);
  });

  it('flags growth over the second half of a long enough series only', () => {
    const growing = Array.from({ length: 121 }, (_, i) => ({ atMs: i * 5000, bytes: 100 * MiB + i * 0.5 * MiB }));
    const rule = { minSpanMs: 600_000, maxSlopeMiBPerMinute: 1 };
    expect(growthViolation('router', 'retained heap', growing, rule)?.detail).toMatch(/^router retained heap grows 6\.00 MiB\/min/);
    expect(growthViolation('router', 'retained heap', growing.slice(0, 60), rule)).toBeUndefined();
    // Start-up growth followed by a plateau is not a leak.
    const plateau = growing.map((s, i) => ({ ...s, bytes: i < 40 ? s.bytes : 120 * MiB }));
    expect(growthViolation('router', 'retained heap', plateau, rule)).toBeUndefined();
  });
});
