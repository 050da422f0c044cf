// One soak run: start the platform, churn and inject the seeded faults for the planned minutes, stop
// both, wait for convergence (the quiet period), check the final invariants, and summarise. Everything
// started is stopped in `finally`, whatever happened.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Pod } from '@kubernetes/client-node';
import type { At } from '../../api/at.ts';
import type { PodSet } from '../../api/podset.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { Churn } from './churn.ts';
import { lastFaultEndMs, planFaults, type FaultKind } from './fault-plan.ts';
import { FaultRunner } from './faults.ts';
import { checkAts, checkPodLabels, checkPodSets, checkSidecars, isAnnotatedForLabel, growthViolation, sidecarExpected, type Violation } from './invariants.ts';
import { startObserver, type Observer } from './observer.ts';
import { SOAK_NAMESPACE, startPlatform, type Platform } from './platform.ts';
import { createPrng } from './prng.ts';
import { retainedHeapBytes } from './heap-probe.ts';
import { MemorySampler } from './memory-sampler.ts';
import type { SoakSummary } from './summary.ts';

export interface SoakOptions {
  minutes: number;
  seed: number;
  logDir: string;
  /** Sample Loops run as namespaced Loops of the soak namespace instead of ClusterLoops (--namespaced-loops). */
  namespacedLoops?: string[];
  /** How long the quiet period may take before the run counts as not converged. */
  convergenceTimeoutMs?: number;
  say?: (line: string) => void;
  signal?: AbortSignal;
}

/** A Watcher created less than this before a pod may not be in the webhook's cache yet. */
const MIN_WATCHER_AGE_MS = 3000;
/** An At is judged once its schedule is this far behind (its pod needs creating and completing). */
const AT_GRACE_MS = 15_000;
// Judged on the heap retained after a full GC, not on RSS: RSS also holds heap V8 has grown and not given
// back yet, code and malloc arenas, and kept creeping up over 30 minutes with a flat retained heap (docs/soak.md).
const LEAK_RULE = { minSpanMs: 10 * 60_000, maxSlopeMiBPerMinute: 0.25 };

/** The final state, read fresh from the API server: our watches may still lag a fault that just ended. */
interface FinalState {
  pods: V1Pod[];
  podsets: PodSet[];
  ats: At[];
}

async function readFinalState(client: KubeClient): Promise<FinalState> {
  const list = async <T>(path: string): Promise<T[]> => (await client.request<{ items: T[] }>({ path })).items;
  const [pods, podsets, ats] = await Promise.all([
    list<V1Pod>(`/api/v1/namespaces/${SOAK_NAMESPACE}/pods`),
    list<PodSet>(`/apis/app.kubeloop.dev/v1alpha1/namespaces/${SOAK_NAMESPACE}/podsets`),
    list<At>(`/apis/cnat.kubeloop.dev/v1alpha1/namespaces/${SOAK_NAMESPACE}/ats`),
  ]);
  return { pods, podsets, ats };
}

/** How much the final checks looked at: a pass over nothing proves nothing. */
function finalCounts(state: FinalState, churn: Churn, faults: FaultRunner): Record<string, number> {
  const rules = { watchers: churn.record.watchers, minWatcherAgeMs: MIN_WATCHER_AGE_MS, webhookKillsMs: faults.webhookKillsMs };
  return {
    pods: state.pods.length,
    'annotated pods': state.pods.filter(isAnnotatedForLabel).length,
    PodSets: state.podsets.length,
    'At due': state.ats.filter((at) => Date.parse(at.spec?.schedule ?? '') + AT_GRACE_MS <= Date.now()).length,
    'Watcher pods': churn.record.watcherPodCreates.length,
    'Watcher pods owed a sidecar': churn.record.watcherPodCreates.filter((c) => sidecarExpected(c, rules)).length,
  };
}

function finalChecks(state: FinalState, observer: Observer, churn: Churn, faults: FaultRunner, atMs: number): Violation[] {
  // A pod created in the last moments may not have reached our watch: the fresh read is its first sight.
  for (const pod of state.pods) observer.noteFirstSeen(pod);
  return [
    ...checkPodLabels(state.pods, atMs),
    ...checkPodSets(state.podsets, state.pods, atMs),
    ...checkAts(state.ats, state.pods, Date.now(), AT_GRACE_MS, atMs),
    ...checkSidecars(churn.record.watcherPodCreates, observer.firstSeen, {
      watchers: churn.record.watchers,
      minWatcherAgeMs: MIN_WATCHER_AGE_MS,
      webhookKillsMs: faults.webhookKillsMs,
    }),
  ];
}

async function waitForLeader(platform: Platform, signal: AbortSignal | undefined): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!signal?.aborted && !(await platform.leader().catch(() => undefined))) {
    if (Date.now() > deadline) throw new Error('no router took the lease within 60 s');
    await sleep(250);
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakSummary> {
  const say = options.say ?? (() => {});
  const started = Date.now();
  const now = (): number => Date.now() - started;
  const violations: Violation[] = [];
  const report = (v: Violation): void => {
    violations.push(v);
    say(`VIOLATION +${(v.atMs / 1000).toFixed(1)}s ${v.invariant}: ${v.detail}`);
  };
  const rng = createPrng(options.seed);
  const durationMs = Math.round(options.minutes * 60_000);
  const plan = planFaults(rng.fork('faults'), {
    durationMs,
    warmupMs: Math.min(20_000, durationMs / 6),
    meanGapMs: 20_000,
    functions: ['at', 'pod-name-label', 'podset', 'watcher'],
  });
  say(`seed ${options.seed}: ${plan.length} faults planned over ${options.minutes} min, the last ending at +${(lastFaultEndMs(plan) / 1000).toFixed(0)}s`);

  let platform: Platform | undefined;
  let observer: Observer | undefined;
  let churn: Churn | undefined;
  let faults: FaultRunner | undefined;
  let sampler: MemorySampler | undefined;
  let heapSampler: MemorySampler | undefined;
  const abort = new AbortController();
  const onAbort = (): void => abort.abort();
  options.signal?.addEventListener('abort', onAbort);
  try {
    platform = await startPlatform(options.logDir, say, options.namespacedLoops ?? []);
    await waitForLeader(platform, abort.signal);
    observer = await startObserver(platform.client, SOAK_NAMESPACE, now, report);
    const live = observer;
    churn = new Churn({ client: platform.client, namespace: SOAK_NAMESPACE, rng: rng.fork('churn'), now, atDone: (name) => live.atDone(name), rate: 2, maxInFlight: 16, onPodSetWritten: (podset) => live.noteWritten(podset) });
    faults = new FaultRunner({ platform, churn, now, signal: abort.signal, say });
    sampler = new MemorySampler(platform.processes, now);
    sampler.start(5000);
    // A full GC per process: every 30 s is plenty for a slope and costs a few ms of each.
    heapSampler = new MemorySampler(platform.processes, now, ({ inspectPort }) => (inspectPort ? retainedHeapBytes(inspectPort) : Promise.resolve(undefined)));
    heapSampler.start(30_000);

    const pids = { ...platform.plane.pids(), ...Object.fromEntries(platform.processes().map((p) => [p.role, p.pid])) };
    say(`pids ${JSON.stringify(pids)}`);
    say(`platform up after ${(now() / 1000).toFixed(1)}s; churning for ${options.minutes} min`);
    const churnStart = now();
    churn.start();
    faults.schedule(plan);
    await sleep(durationMs, undefined, { signal: abort.signal }).catch(() => {});
    await churn.stop();
    const churnStoppedMs = now();
    await faults.drain();
    const churnMs = churnStoppedMs - churnStart;

    // The quiet period: no churn, no faults; poll until every final check holds. Measured from when the
    // platform was left alone (the last fault over, restarts included, and the churn stopped).
    const aloneFrom = Math.max(faults.lastEndMs, churnStoppedMs);
    let convergedAfterChurnMs: number | undefined;
    let last: Violation[] = [];
    let state: FinalState = { pods: [], podsets: [], ats: [] };
    let convergenceMs: number | undefined;
    const deadline = Date.now() + (options.convergenceTimeoutMs ?? 180_000);
    while (!abort.signal.aborted) {
      try {
        state = await readFinalState(platform.client);
        last = finalChecks(state, observer, churn, faults, now());
        if (last.length === 0) {
          convergenceMs = Math.max(0, now() - aloneFrom);
          convergedAfterChurnMs = now() - churnStoppedMs;
          break;
        }
      } catch (error) {
        last = [{ atMs: now(), invariant: 'podset-status', detail: `final state unreadable: ${(error as Error).message}` }];
      }
      if (Date.now() > deadline) break;
      await sleep(2000, undefined, { signal: abort.signal }).catch(() => {});
    }
    say(convergenceMs === undefined ? `not converged: ${last.length} final checks fail` : `converged ${(convergenceMs / 1000).toFixed(1)}s after the last fault`);
    violations.push(...last);
    const checked = finalCounts(state, churn, faults);
    for (const overlap of platform.tracker.overlaps) {
      violations.push({ atMs: overlap.atMs, invariant: 'concurrent-reconcile', detail: `Loop ${overlap.loop} key ${overlap.key} reconciled twice at once (${overlap.reconcileIds.join(', ')})` });
    }
    await sampler.sample();
    await heapSampler.sample();
    const rss = sampler.summary();
    const heap = heapSampler.summary();
    for (const series of heap) {
      const leak = growthViolation(`${series.role} (pid ${series.pid})`, 'retained heap', heapSampler.samplesOf(series.role, series.pid), LEAK_RULE);
      if (leak) violations.push(leak);
    }
    const faultCounts: Partial<Record<FaultKind, number>> = {};
    for (const f of faults.injected) if (!f.error) faultCounts[f.kind] = (faultCounts[f.kind] ?? 0) + 1;
    return {
      seed: options.seed,
      startedAt: new Date(started).toISOString(),
      plannedMinutes: options.minutes,
      churnMs,
      totalMs: now(),
      churned: Object.fromEntries(churn.record.done),
      failedCalls: Object.fromEntries(churn.record.failed),
      faults: faultCounts,
      faultErrors: faults.injected.filter((f) => f.error).map((f) => `+${(f.startMs / 1000).toFixed(1)}s ${f.kind}: ${f.error}`),
      reconcileCalls: platform.tracker.calls,
      checked,
      ...(convergenceMs === undefined ? {} : { convergenceMs }),
      ...(convergedAfterChurnMs === undefined ? {} : { convergedAfterChurnMs }),
      violations,
      rss,
      heap,
      logDir: options.logDir,
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    abort.abort();
    sampler?.stop();
    heapSampler?.stop();
    await churn?.stop().catch(() => {});
    await faults?.drain().catch(() => {});
    await observer?.stop().catch(() => {});
    await platform?.stop();
  }
}
