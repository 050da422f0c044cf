// Where one quiet change's time goes in bench:tenants-scale: its PATCH answered, the router's watch event (from the
// router's history lines, --history-dir), the reconcile leaving the queue, the request built, and the function's
// receipt. Pure: the bench gathers the timestamps; this matches them by change and sums up the segments.
import { delta, type Sample } from './process-figures.ts';
import { percentile } from './router-bench-kit.ts';
import { formatStalls, type LoopStalls } from './loop-probe-reader.ts';

/** The annotation the bench writes on the quiet tenant's ConfigMap: when (Date.now()) the PATCH was sent. */
export const CHANGED_AT = 'bench.kubeloop.dev/changed-at';

/** One quiet PATCH as the bench saw it. */
export interface QuietWrite {
  /** Date.now() just before sending; also the annotation's value. */
  changedAt: number;
  /** Date.now() when the API server's answer was read. */
  answeredAt: number;
  resourceVersion: string;
  /** Date.now() when an idle watcher of the bench's own saw the change's watch event (the API server's delivery). */
  watchedAt?: number;
}

/** The function's call for a quiet change, as the function process saw it. */
export interface QuietArrival {
  namespace: string;
  changedAt: number;
  /** The object's resourceVersion in the request. */
  resourceVersion: string;
  /** The request's `now`: when the router built it. */
  builtAt: number;
  receivedAt: number;
}

/** The router's view of a resourceVersion of the primary: when its watch event was handled, when its reconcile started. */
export interface RouterSeen {
  seenAt: number;
  startedAt: number;
  /** The reconcile's writes after the call (its history's durations.applyMs): the router's token wait and the API's answer. */
  applyMs?: number;
}

/** Segments of one change, ms; undefined where the router's history did not hold the change. */
export interface Decomposed {
  total: number;
  /** Sent -> the PATCH answered (the API server and etcd, plus the bench's own loop). */
  write: number;
  /** Answered -> the bench's own idle watcher saw the event (the API server's watch delivery). */
  delivered?: number;
  /** The idle watcher saw it (answered, without one) -> the router handled its watch event (the router's socket and event loop). */
  toRouter?: number;
  /** Watch event -> the reconcile left the queue (the fair scheduler and the Loop's queue). */
  queue?: number;
  /** Left the queue -> the request built (reading the caches). */
  build?: number;
  /** Request built -> the function process received it (HTTP and both processes' loops). */
  call: number;
  /** After the call, not in the total: the reconcile's own writes (the owned Secret), from the router's history. */
  apply?: number;
}

export const SEGMENTS = ['write', 'delivered', 'toRouter', 'queue', 'build', 'call'] as const;

/** From history lines (JSON, one per line): each primary resourceVersion's watch-event time and reconcile start. */
export function routerSeen(historyText: string, loop: string): Map<string, RouterSeen> {
  const seen = new Map<string, RouterSeen>();
  for (const line of historyText.split('\n')) {
    if (!line.includes(loop)) continue;
    const entry = JSON.parse(line) as { loop?: string; startedAt?: string; durations?: { applyMs?: number }; triggers?: Array<{ source?: string; resourceVersion?: string; at?: number }> };
    if (entry.loop !== loop || !entry.startedAt) continue;
    const startedAt = Date.parse(entry.startedAt);
    const applyMs = entry.durations?.applyMs;
    for (const t of entry.triggers ?? []) {
      if (t.source === 'primary' && t.resourceVersion && typeof t.at === 'number' && !seen.has(t.resourceVersion)) seen.set(t.resourceVersion, { seenAt: t.at, startedAt, ...(applyMs === undefined ? {} : { applyMs }) });
    }
  }
  return seen;
}

/** Each write's first arrival at the function, cut into segments; writes never seen by the function are left out. */
export function decompose(writes: readonly QuietWrite[], arrivals: readonly QuietArrival[], seen: ReadonlyMap<string, RouterSeen>): Decomposed[] {
  const firstArrival = new Map<number, QuietArrival>();
  for (const a of arrivals) if (!firstArrival.has(a.changedAt)) firstArrival.set(a.changedAt, a);
  const out: Decomposed[] = [];
  for (const w of writes) {
    const a = firstArrival.get(w.changedAt);
    if (!a) continue;
    const r = seen.get(a.resourceVersion);
    const d: Decomposed = { total: a.receivedAt - w.changedAt, write: w.answeredAt - w.changedAt, call: a.receivedAt - a.builtAt };
    if (w.watchedAt !== undefined) d.delivered = w.watchedAt - w.answeredAt;
    if (r) {
      d.toRouter = r.seenAt - (w.watchedAt ?? w.answeredAt);
      d.queue = r.startedAt - r.seenAt;
      d.build = a.builtAt - r.startedAt;
      if (r.applyMs !== undefined) d.apply = r.applyMs;
    }
    out.push(d);
  }
  return out;
}

export interface DecompositionSummary {
  samples: number;
  /** Samples whose router side was found in the history. */
  withRouter: number;
  totalP50: number;
  totalP99: number;
  /** Per segment: p50 over all samples, and the mean over the slowest tenth (by total): where the tail goes. */
  segments: Record<(typeof SEGMENTS)[number], { p50: number; tailMean: number }>;
  /** The reconciles' own writes after the call (not in the total): p50 and p99, ms. */
  apply: { p50: number; p99: number };
}

export function summarize(samples: readonly Decomposed[]): DecompositionSummary {
  const slowest = [...samples].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(samples.length / 10)));
  const values = (list: readonly Decomposed[], s: (typeof SEGMENTS)[number]) => list.map((d) => d[s]).filter((v): v is number => v !== undefined);
  const mean = (v: number[]) => (v.length === 0 ? NaN : v.reduce((a, b) => a + b, 0) / v.length);
  const applies = samples.map((d) => d.apply).filter((v): v is number => v !== undefined);
  const segments = Object.fromEntries(SEGMENTS.map((s) => [s, { p50: values(samples, s).length ? percentile(values(samples, s), 50) : NaN, tailMean: mean(values(slowest, s)) }])) as DecompositionSummary['segments'];
  return {
    samples: samples.length,
    withRouter: samples.filter((d) => d.queue !== undefined).length,
    totalP50: samples.length ? percentile(samples.map((d) => d.total), 50) : NaN,
    totalP99: samples.length ? percentile(samples.map((d) => d.total), 99) : NaN,
    segments,
    apply: { p50: applies.length ? percentile(applies, 50) : NaN, p99: applies.length ? percentile(applies, 99) : NaN },
  };
}

/** What the phase cost around the quiet tenant: the busy tenants' patches, each process's CPU, the router's event-loop delay. */
export interface PhaseLoad {
  patchesPerS: number;
  routerCpuMsPerS: number;
  functionCpuMsPerS: number;
  /** kube-apiserver and etcd together. */
  apiCpuMsPerS: number;
  routerLagP99Ms: number;
  routerLagMaxMs: number;
  /** The router's and the function's event-loop stalls at 1 ms resolution (BENCH_LOOP_PROBE). */
  stalls?: { router: LoopStalls; function: LoopStalls };
  /** The router's Loop requests that waited for an API token (its shared tenant budget) over the phase, and their wait. */
  apiTokenWaits?: { count: number; seconds: number };
  /** The API server's Priority and Fairness over the phase, per priority level that dispatched anything. */
  flowControl?: FlowControlShare[];
}

/** One APF priority level over a phase: requests dispatched, their mean wait in its queues, requests it rejected. */
export interface FlowControlShare {
  priorityLevel: string;
  dispatched: number;
  meanWaitMs: number;
  rejected: number;
}

/** From two scrapes of the API server's /metrics (apiserver_flowcontrol_*): what each priority level did in between. */
export function flowControl(before: Sample[], after: Sample[]): FlowControlShare[] {
  const levels = new Set(after.filter((s) => s.name === 'apiserver_flowcontrol_dispatched_requests_total').map((s) => s.labels.priority_level ?? ''));
  return [...levels]
    .sort()
    .map((priorityLevel) => {
      const d = (name: string) => delta(before, after, name, { priority_level: priorityLevel });
      const waits = d('apiserver_flowcontrol_request_wait_duration_seconds_count');
      return {
        priorityLevel,
        dispatched: d('apiserver_flowcontrol_dispatched_requests_total'),
        meanWaitMs: waits === 0 ? 0 : (d('apiserver_flowcontrol_request_wait_duration_seconds_sum') * 1000) / waits,
        rejected: d('apiserver_flowcontrol_rejected_requests_total'),
      };
    })
    .filter((share) => share.dispatched > 0 || share.rejected > 0);
}

/** "write 3/40  toRouter 2/300 ..." ms: p50 / mean of the slowest tenth, per segment. */
export function formatDecomposition(label: string, s: DecompositionSummary, load?: PhaseLoad): string {
  const parts = SEGMENTS.map((k) => `${k} ${fmt(s.segments[k].p50)}/${fmt(s.segments[k].tailMean)}`);
  const around = load
    ? `\n    busy patches ${fmt(load.patchesPerS)}/s; router CPU ${fmt(load.routerCpuMsPerS)} ms/s, event-loop delay p99 ${fmt(load.routerLagP99Ms)} ms (max ${fmt(load.routerLagMaxMs)}); function CPU ${fmt(load.functionCpuMsPerS)} ms/s; API server + etcd CPU ${fmt(load.apiCpuMsPerS)} ms/s${load.apiTokenWaits ? `; router requests that waited for an API token: ${load.apiTokenWaits.count} (${(load.apiTokenWaits.seconds * 1000).toFixed(0)} ms in all)` : ''}${formatFlowControl(load.flowControl)}${load.stalls ? `\n    router ${formatStalls(load.stalls.router)}; function ${formatStalls(load.stalls.function)}` : ''}`
    : '';
  return `  ${label}: p50 ${fmt(s.totalP50)} p99 ${fmt(s.totalP99)} ms (${s.samples} changes, ${s.withRouter} in the router's history); per segment p50/slowest-tenth mean, ms: ${parts.join('  ')}; then its own write (apply) p50/p99 ${fmt(s.apply.p50)}/${fmt(s.apply.p99)}${around}`;
}

const fmt = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(0));

/** "; APF: exempt 1200 (wait 0.0 ms), workload-low 300 (wait 2.1 ms, 0 rejected)". */
function formatFlowControl(shares: FlowControlShare[] | undefined): string {
  if (!shares || shares.length === 0) return '';
  return `\n    API Priority and Fairness, dispatched (mean queue wait): ${shares.map((s) => `${s.priorityLevel} ${s.dispatched.toFixed(0)} (${s.meanWaitMs.toFixed(1)} ms${s.rejected > 0 ? `, ${s.rejected.toFixed(0)} rejected` : ''})`).join(', ')}`;
}
