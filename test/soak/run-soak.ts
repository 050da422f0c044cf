// One soak run: start the platform, churn and inject the seeded faults for the planned minutes, stop
// both, wait for convergence (the quiet period), check the final invariants, and summarise. Everything
// started is stopped in `finally`, whatever happened.
import { setTimeout as sleep } from 'node:timers/promises';
import { Churn } from './churn.ts';
import { lastFaultEndMs, planFaults, type FaultKind } from './fault-plan.ts';
import { FaultRunner } from './faults.ts';
import { checkAts, checkPodLabels, checkPodSets, checkSidecars, isAnnotatedForLabel, rssViolation, sidecarExpected, type Violation } from './invariants.ts';
import { startObserver, type Observer } from './observer.ts';
import { SOAK_NAMESPACE, startPlatform, type Platform } from './platform.ts';
import { createPrng } from './prng.ts';
import { RssSampler } from './rss-sampler.ts';
import type { SoakSummary } from './summary.ts';

export interface SoakOptions {
  minutes: number;
  seed: number;
  logDir: string;
  /** How long the quiet period may take before the run counts as not converged. */
  convergenceTimeoutMs?: number;
  say?: (line: string) => void;
  signal?: AbortSignal;
}

/** A Watcher created less than this before a pod may not be in the webhook's cache yet. */
const MIN_WATCHER_AGE_MS = 3000;
/** An At is judged once its schedule is this far behind (its pod needs creating and completing). */
const AT_GRACE_MS = 15_000;
const LEAK_RULE = { minSpanMs: 10 * 60_000, maxSlopeMiBPerMinute: 1 };

/** How much the final checks looked at: a pass over nothing proves nothing. */
function finalCounts(observer: Observer, churn: Churn, faults: FaultRunner): Record<string, number> {
  const pods = observer.pods.store.list();
  const rules = { watchers: churn.record.watchers, minWatcherAgeMs: MIN_WATCHER_AGE_MS, webhookKillsMs: faults.webhookKillsMs };
  return {
    pods: pods.length,
    'annotated pods': pods.filter(isAnnotatedForLabel).length,
    PodSets: observer.podsets.store.list().length,
    'At due': observer.ats.store.list().filter((at) => Date.parse(at.spec?.schedule ?? '') + AT_GRACE_MS <= Date.now()).length,
    'Watcher pods': churn.record.watcherPodCreates.length,
    'Watcher pods owed a sidecar': churn.record.watcherPodCreates.filter((c) => sidecarExpected(c, rules)).length,
  };
}

function finalChecks(observer: Observer, churn: Churn, faults: FaultRunner, atMs: number): Violation[] {
  const pods = observer.pods.store.list();
  return [
    ...checkPodLabels(pods, atMs),
    ...checkPodSets(observer.podsets.store.list(), pods, atMs),
    ...checkAts(observer.ats.store.list(), pods, Date.now(), AT_GRACE_MS, atMs),
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
  let sampler: RssSampler | undefined;
  const abort = new AbortController();
  const onAbort = (): void => abort.abort();
  options.signal?.addEventListener('abort', onAbort);
  try {
    platform = await startPlatform(options.logDir, say);
    await waitForLeader(platform, abort.signal);
    observer = await startObserver(platform.client, SOAK_NAMESPACE, now, report);
    const live = observer;
    churn = new Churn({ client: platform.client, namespace: SOAK_NAMESPACE, rng: rng.fork('churn'), now, atDone: (name) => live.atDone(name), rate: 2, maxInFlight: 16 });
    faults = new FaultRunner({ platform, churn, now, signal: abort.signal, say });
    sampler = new RssSampler(platform.processes, now);
    sampler.start(5000);

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
    let convergenceMs: number | undefined;
    const deadline = Date.now() + (options.convergenceTimeoutMs ?? 180_000);
    while (!abort.signal.aborted) {
      last = finalChecks(observer, churn, faults, now());
      if (last.length === 0) {
        convergenceMs = Math.max(0, now() - aloneFrom);
        convergedAfterChurnMs = now() - churnStoppedMs;
        break;
      }
      if (Date.now() > deadline) break;
      await sleep(2000, undefined, { signal: abort.signal }).catch(() => {});
    }
    say(convergenceMs === undefined ? `not converged: ${last.length} final checks fail` : `converged ${(convergenceMs / 1000).toFixed(1)}s after the last fault`);
    violations.push(...last);
    const checked = finalCounts(observer, churn, faults);
    for (const overlap of platform.tracker.overlaps) {
      violations.push({ atMs: overlap.atMs, invariant: 'concurrent-reconcile', detail: `Loop ${overlap.loop} key ${overlap.key} reconciled twice at once (${overlap.reconcileIds.join(', ')})` });
    }
    await sampler.sample();
    const rss = sampler.summary();
    for (const series of rss) {
      const leak = rssViolation(`${series.role} (pid ${series.pid})`, sampler.samplesOf(series.role, series.pid), LEAK_RULE);
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
      logDir: options.logDir,
    };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    abort.abort();
    sampler?.stop();
    await churn?.stop().catch(() => {});
    await faults?.drain().catch(() => {});
    await observer?.stop().catch(() => {});
    await platform?.stop();
  }
}
