// The soak's invariants as pure checks over what the independent watches and the churn recorded, so
// each rule is unit-tested on hand-made observations and the soak only gathers them.
import type { V1Pod } from '@kubernetes/client-node';
import type { At } from '../../api/at.ts';
import type { PodSet } from '../../api/podset.ts';

export const LABEL_ANNOTATION = 'kubeloop.dev/add-pod-name-label';
export const NAME_LABEL = 'kubeloop.dev/pod-name';

export type InvariantName = 'pod-label' | 'podset-bound' | 'podset-status' | 'at-done' | 'sidecar' | 'concurrent-reconcile' | 'heap';

export interface Violation {
  /** Milliseconds since the soak started. */
  atMs: number;
  invariant: InvariantName;
  detail: string;
}

const nameOf = (o: { metadata?: { name?: string } }): string => o.metadata?.name ?? '';

export function isAnnotatedForLabel(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[LABEL_ANNOTATION] === 'true';
}

/** Continuous: a label is only ever the pod's own name, and only on annotated pods. */
export function labelViolation(pod: V1Pod, atMs: number): Violation | undefined {
  const label = pod.metadata?.labels?.[NAME_LABEL];
  if (label === undefined) return undefined;
  if (!isAnnotatedForLabel(pod)) return { atMs, invariant: 'pod-label', detail: `unannotated pod ${nameOf(pod)} carries ${NAME_LABEL}=${label}` };
  if (label !== nameOf(pod)) return { atMs, invariant: 'pod-label', detail: `pod ${nameOf(pod)} labelled ${NAME_LABEL}=${label}` };
  return undefined;
}

/** Final: every annotated pod labelled with its own name, no other pod labelled. */
export function checkPodLabels(pods: readonly V1Pod[], atMs: number): Violation[] {
  const out: Violation[] = [];
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const wrong = labelViolation(pod, atMs);
    if (wrong) out.push(wrong);
    else if (isAnnotatedForLabel(pod) && pod.metadata?.labels?.[NAME_LABEL] === undefined) {
      out.push({ atMs, invariant: 'pod-label', detail: `annotated pod ${nameOf(pod)} has no ${NAME_LABEL} label` });
    }
  }
  return out;
}

/** What a PodSet counts: Pending or Running pods that are not being deleted. */
export function isLivePod(pod: V1Pod): boolean {
  const phase = pod.status?.phase ?? 'Pending';
  return !pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

export function controllerUid(object: { metadata?: { ownerReferences?: Array<{ controller?: boolean; uid: string }> } }): string | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller)?.uid;
}

/**
 * spec.replicas of each PodSet over time, as the independent watch saw it. The bound a new pod is held
 * to is the largest value within `windowMs` before it appeared: the router may act on a spec a moment
 * older than our watch's (a scale-down right after a scale-up), but never on one it has not seen.
 */
export class ReplicasHistory {
  readonly #history = new Map<string, Array<{ atMs: number; replicas: number }>>();

  record(uid: string, atMs: number, replicas: number): void {
    const list = this.#history.get(uid) ?? [];
    if (list.at(-1)?.replicas !== replicas) list.push({ atMs, replicas });
    this.#history.set(uid, list);
  }

  /** Largest replicas in force at any time within [atMs - windowMs, atMs]; undefined if never seen. */
  maxWithin(uid: string, atMs: number, windowMs: number): number | undefined {
    const list = this.#history.get(uid);
    if (!list || list.length === 0) return undefined;
    let max: number | undefined;
    for (let i = 0; i < list.length; i += 1) {
      const entry = list[i]!;
      const until = list[i + 1]?.atMs ?? Infinity;
      if (entry.atMs <= atMs && until >= atMs - windowMs) max = Math.max(max ?? 0, entry.replicas);
    }
    return max;
  }

  forget(uid: string): void {
    this.#history.delete(uid);
  }
}

/** Continuous: when a pod of a PodSet appears, the live pods of that PodSet must not exceed its replicas. */
export function podSetBoundViolation(podset: string, live: number, allowed: number | undefined, atMs: number): Violation | undefined {
  if (allowed === undefined || live <= allowed) return undefined;
  return { atMs, invariant: 'podset-bound', detail: `PodSet ${podset} observed with ${live} live pods, spec.replicas ${allowed}` };
}

/** Final: each PodSet has exactly spec.replicas live pods and a status that says so. */
export function checkPodSets(podsets: readonly PodSet[], pods: readonly V1Pod[], atMs: number): Violation[] {
  const out: Violation[] = [];
  for (const ps of podsets) {
    if (ps.metadata?.deletionTimestamp) continue;
    const replicas = ps.spec?.replicas ?? 1;
    const live = pods.filter((p) => controllerUid(p) === ps.metadata?.uid && isLivePod(p)).map(nameOf).sort();
    const problems: string[] = [];
    if (live.length !== replicas) problems.push(`${live.length} live pods`);
    if (ps.status?.availableReplicas !== replicas) problems.push(`status.availableReplicas ${String(ps.status?.availableReplicas)}`);
    if (JSON.stringify(ps.status?.podNames ?? []) !== JSON.stringify(live)) problems.push(`status.podNames [${(ps.status?.podNames ?? []).join(',')}] != [${live.join(',')}]`);
    if (ps.status?.observedGeneration !== ps.metadata?.generation) problems.push(`observedGeneration ${String(ps.status?.observedGeneration)} != generation ${String(ps.metadata?.generation)}`);
    if (problems.length > 0) out.push({ atMs, invariant: 'podset-status', detail: `PodSet ${nameOf(ps)} (replicas ${replicas}): ${problems.join('; ')}` });
  }
  return out;
}

/** Final: every At whose schedule passed more than graceMs ago is DONE and its pod finished. */
export function checkAts(ats: readonly At[], pods: readonly V1Pod[], nowMs: number, graceMs: number, atMs: number): Violation[] {
  const out: Violation[] = [];
  for (const at of ats) {
    const due = Date.parse(at.spec?.schedule ?? '');
    if (at.metadata?.deletionTimestamp || !Number.isFinite(due) || due + graceMs > nowMs) continue;
    const pod = pods.find((p) => controllerUid(p) === at.metadata?.uid);
    const phase = pod?.status?.phase;
    if (at.status?.phase !== 'DONE') out.push({ atMs, invariant: 'at-done', detail: `At ${nameOf(at)} due ${at.spec?.schedule} is ${at.status?.phase ?? 'without status'}` });
    else if (!pod || (phase !== 'Succeeded' && phase !== 'Failed')) out.push({ atMs, invariant: 'at-done', detail: `At ${nameOf(at)} is DONE but its pod is ${pod ? phase : 'missing'}` });
  }
  return out;
}

/** A pod create naming a Watcher, as the churn made it. */
export interface WatcherPodCreate {
  pod: string;
  watcher: string;
  startMs: number;
  endMs: number;
}

export interface SidecarRules {
  /** Sidecar image of each Watcher, and when its create returned. */
  watchers: ReadonlyMap<string, { image: string; createdMs: number }>;
  /** A Watcher younger than this at the pod's create may not be in the webhook's cache yet. */
  minWatcherAgeMs: number;
  /** Moments a webhook replica was killed: a review in flight then is lost (failurePolicy Ignore). */
  webhookKillsMs: readonly number[];
}

/** Whether the webhook was certainly up and informed for this create. */
export function sidecarExpected(create: WatcherPodCreate, rules: SidecarRules): boolean {
  const watcher = rules.watchers.get(create.watcher);
  if (!watcher || create.startMs - watcher.createdMs < rules.minWatcherAgeMs) return false;
  return !rules.webhookKillsMs.some((kill) => kill >= create.startMs && kill <= create.endMs);
}

/** The pod as first observed: container images and the injected annotation. */
export interface FirstSeenPod {
  images: string[];
  injected?: string;
}

/** Final: a sidecar is never injected twice; where the webhook was up, exactly once. */
export function checkSidecars(creates: readonly WatcherPodCreate[], seen: ReadonlyMap<string, FirstSeenPod>, rules: SidecarRules): Violation[] {
  const out: Violation[] = [];
  for (const create of creates) {
    const pod = seen.get(create.pod);
    const image = rules.watchers.get(create.watcher)?.image;
    if (!pod || !image) continue;
    const sidecars = pod.images.filter((i) => i === image).length;
    if (sidecars > 1) out.push({ atMs: create.endMs, invariant: 'sidecar', detail: `pod ${create.pod} carries the ${create.watcher} sidecar ${sidecars} times` });
    else if (sidecars === 0 && sidecarExpected(create, rules)) {
      out.push({ atMs: create.endMs, invariant: 'sidecar', detail: `pod ${create.pod} naming Watcher ${create.watcher} was created while the webhook was up, without the sidecar` });
    }
  }
  return out;
}

export interface MemorySample {
  atMs: number;
  bytes: number;
}

/** Least-squares slope in MiB per minute; 0 with fewer than two samples. */
export function slopeMiBPerMinute(samples: readonly MemorySample[]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const mx = samples.reduce((a, s) => a + s.atMs, 0) / n;
  const my = samples.reduce((a, s) => a + s.bytes, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.atMs - mx) * (s.bytes - my);
    den += (s.atMs - mx) ** 2;
  }
  return den === 0 ? 0 : ((num / den) * 60_000) / (1024 * 1024);
}

export interface GrowthRule {
  /** Only series at least this long are judged: a short run's slope is start-up noise. */
  minSpanMs: number;
  maxSlopeMiBPerMinute: number;
}

/** The second half of a series: start-up growth (JIT, caches filling) is not a leak. */
export function steadyHalf(samples: readonly MemorySample[]): MemorySample[] {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last) return [];
  const mid = first.atMs + (last.atMs - first.atMs) / 2;
  return samples.filter((s) => s.atMs >= mid);
}

/** A leak: `measure` (e.g. "retained heap") of `process` keeps growing over the second half of a long series. */
export function growthViolation(process: string, measure: string, samples: readonly MemorySample[], rule: GrowthRule): Violation | undefined {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last || last.atMs - first.atMs < rule.minSpanMs) return undefined;
  const slope = slopeMiBPerMinute(steadyHalf(samples));
  if (slope <= rule.maxSlopeMiBPerMinute) return undefined;
  return { atMs: last.atMs, invariant: 'heap', detail: `${process} ${measure} grows ${slope.toFixed(2)} MiB/min over the second half of ${((last.atMs - first.atMs) / 60_000).toFixed(1)} min` };
}
