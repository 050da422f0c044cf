// Section (0) of bench:router, the pure part: the figures of kubeloop against the controller-runtime baseline
// per API-limit mode and work item (ratios of runs from the same bench run), and the report printed from them.
import type { PeakMemory } from './router-bench-router.ts';
import { CATEGORIES, formatSplit, type NativeSplit } from './native-split.ts';

/**
 * Variants of kubeloop run beside the default in the same run, compared with it: `unbatched` (spec.function.batch
 * .enabled false), `undici-writes` (the router's --http2-writes=false: writes over undici like reads), `window`
 * (spec.function.batch.windowMs 5: calls gathered for up to 5 ms, not only within one event-loop turn), `baseline` (the router of
 * another checkout, BENCH_BASELINE_TREE: before and after a change in one run).
 */
export const VARIANTS = {
  unbatched: 'batched (default) vs unbatched (spec.function.batch.enabled: false), same run',
  'undici-writes': 'writes over node:http2 (default) vs over undici (--http2-writes=false), same run',
  window: 'no gathering window (default) vs a 5 ms one (spec.function.batch.windowMs: 5), same run',
  baseline: 'this tree vs the baseline tree (BENCH_BASELINE_TREE), same run',
} as const;
export type Variant = keyof typeof VARIANTS;
/**
 * `node-floor`: bench/node-floor-controller.ts, the same work on Node's own HTTP/2 client and nothing else, the lower
 * bound of a Node controller's CPU per pod, set beside Go and kubeloop. `node-floor-hop`: the same floor asking the
 * pod-name-label function for each pod's patch, one plain POST per pod: the floor plus the function hop alone.
 */
export type Side = 'kubeloop' | Variant | 'node-floor' | 'node-floor-hop' | 'go';

/** Whether a side's controller calls the pod-name-label function (the router's sides and the floor with the hop). */
export const callsFunction = (side: Side): boolean => side !== 'go' && side !== 'node-floor';
export type Work = 'existing' | 'live';

/** The client limits both sides ran under: `capped` holds them to what controller-runtime ships, `uncapped` lifts it. */
export interface LimitMode {
  name: 'capped' | 'uncapped';
  qps: number;
  burst: number;
}

export interface VersusRun {
  mode: LimitMode;
  side: Side;
  work: Work;
  pods: number;
  /** From the pods' creation (live) or the controller's start (existing) to the last label. */
  totalMs: number;
  /** Controller start (existing) or the pods' creation (live) -> first label seen: the first applied action. */
  firstLabelMs: number;
  /** Per pod: first seen -> labelled (live), controller start -> labelled (existing). */
  p50: number;
  p99: number;
  /** Controller CPU over the run (the router for kubeloop), and the function's (kubeloop only). */
  cpuMs: number;
  functionCpuMs: number;
  /** The controller's peak RSS (VmHWM). */
  peakRss: number;
  /** The controller's RSS when synced with an empty namespace (live runs only). */
  idleRss: number;
  /** The controller's CPU from its process start to synced with an empty namespace (live runs only): its start-up. */
  startCpuMs?: number;
  /** Writes that hit a conflict, and function calls (kubeloop). */
  conflicts: number;
  calls: number;
  /** HTTP requests to the function (a batch is one); kubeloop only. */
  requests: number;
  /** The router's mean function call, ms (kubeloop only). */
  functionCallMs?: number;
  /** The side's place in its round's order, from 0. */
  position?: number;
  /** What the router's peak RSS was made of (kubeloop only). */
  atPeak?: PeakMemory;
  /** The function's peak RSS (VmHWM) so far: one function process serves every kubeloop run (kubeloop only). */
  functionPeakRss?: number;
  /** The controller's perf samples from ready to all labelled, by what ran (BENCH_PERF). */
  native?: NativeSplit;
}

/** kubeloop (batched, the default) against Go for one mode and work item, means over the rounds. */
export interface Comparison {
  mode: LimitMode;
  work: Work;
  pods: number;
  /** Pods per second of each side, and kubeloop's over Go's. */
  podsPerSecond: { kubeloop: number; go: number };
  throughput: number;
  /** CPU ms per pod (= CPU s per 1,000 pods): router and function apart, Go's controller. */
  cpuPerPod: { router: number; function: number; go: number };
  /** (router + function) / Go, and the router alone / Go. */
  cpu: number;
  routerCpu: number;
  firstLabelMs: { kubeloop: number; go: number };
  peakRss: { kubeloop: number; go: number };
  rss: number;
  /** HTTP requests to the function per pod (kubeloop). */
  requestsPerPod: number;
  p50: { kubeloop: number; go: number };
  p99: { kubeloop: number; go: number };
}

const mean = (runs: VersusRun[], pick: (r: VersusRun) => number) => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length;
const itemKey = (r: Pick<VersusRun, 'mode' | 'work' | 'pods'>) => `${r.mode.name} ${r.work} ${r.pods}`;
const perPod = (rs: VersusRun[], pick: (r: VersusRun) => number) => mean(rs, (r) => pick(r) / r.pods);

/** The runs of each mode and work item, by side, in the order first run. */
function bySide(runs: VersusRun[]): Array<Record<Side, VersusRun[]>> {
  return [...new Set(runs.map(itemKey))].map((key) => {
    const of = (side: Side) => runs.filter((r) => itemKey(r) === key && r.side === side);
    return { kubeloop: of('kubeloop'), unbatched: of('unbatched'), 'undici-writes': of('undici-writes'), window: of('window'), baseline: of('baseline'), 'node-floor': of('node-floor'), 'node-floor-hop': of('node-floor-hop'), go: of('go') };
  });
}

/** One comparison per mode and work item that has both a kubeloop and a Go run, in the order first run. */
export function compareSides(runs: VersusRun[]): Comparison[] {
  const comparisons: Comparison[] = [];
  for (const { kubeloop: k, go: g } of bySide(runs)) {
    const first = k[0];
    if (!first || g.length === 0) continue;
    const podsPerSecond = { kubeloop: mean(k, (r) => r.pods / (r.totalMs / 1000)), go: mean(g, (r) => r.pods / (r.totalMs / 1000)) };
    const cpuPerPod = { router: perPod(k, (r) => r.cpuMs), function: perPod(k, (r) => r.functionCpuMs), go: perPod(g, (r) => r.cpuMs) };
    const peakRss = { kubeloop: mean(k, (r) => r.peakRss), go: mean(g, (r) => r.peakRss) };
    comparisons.push({
      mode: first.mode,
      work: first.work,
      pods: first.pods,
      podsPerSecond,
      // Time for the same pods: Go's over kubeloop's (> 1: kubeloop faster).
      throughput: mean(g, (r) => r.totalMs) / mean(k, (r) => r.totalMs),
      cpuPerPod,
      cpu: (cpuPerPod.router + cpuPerPod.function) / cpuPerPod.go,
      routerCpu: cpuPerPod.router / cpuPerPod.go,
      firstLabelMs: { kubeloop: mean(k, (r) => r.firstLabelMs), go: mean(g, (r) => r.firstLabelMs) },
      peakRss,
      rss: peakRss.kubeloop / peakRss.go,
      requestsPerPod: perPod(k, (r) => r.requests),
      p50: { kubeloop: mean(k, (r) => r.p50), go: mean(g, (r) => r.p50) },
      p99: { kubeloop: mean(k, (r) => r.p99), go: mean(g, (r) => r.p99) },
    });
  }
  return comparisons;
}

export const MiB = 1024 * 1024;
/** The side column: as wide as the longest side's name (node-floor-hop). */
const SIDE_WIDTH = 14;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const x = (ratio: number) => `${ratio.toFixed(2)}x`;

/** The report of section (0): one table of runs and one of ratios per mode, batching and memory after. */
export function formatVersus(runs: VersusRun[], concurrency: number): string[] {
  const lines: string[] = [];
  const modes = [...new Map(runs.map((r) => [r.mode.name, r.mode])).values()];
  const comparisons = compareSides(runs);
  for (const mode of modes) {
    const ofMode = runs.filter((r) => r.mode.name === mode.name);
    lines.push('', `(0) ${mode.name}: kubeloop (router + pod-name-label over HTTP) vs controller-runtime, both clients at QPS ${mode.qps} (burst ${mode.burst})${mode.name === 'uncapped' ? ", the tenants' shared budget the same" : ''}, ${concurrency} calls/workers`);
    lines.push('  side           work      pods  all labelled  first action  p50 ms  p99 ms  pods/s  CPU ms/pod router  function  conflicts/pod  calls/pod  reqs/pod  peak RSS   idle RSS');
    for (const r of ofMode) {
      const kube = callsFunction(r.side);
      // The floor's hop is one POST per pod by construction and counts no calls of its own.
      const counted = kube && r.side !== 'node-floor-hop';
      lines.push(
        `  ${r.side.padEnd(SIDE_WIDTH)} ${r.work.padEnd(8)}  ${String(r.pods).padStart(4)}  ${sec(r.totalMs).padStart(12)}  ${sec(r.firstLabelMs).padStart(12)}  ${r.p50.toFixed(0).padStart(6)}  ${r.p99.toFixed(0).padStart(6)}  ${(r.pods / (r.totalMs / 1000)).toFixed(0).padStart(6)}  ${(r.cpuMs / r.pods).toFixed(2).padStart(17)}  ${(kube ? (r.functionCpuMs / r.pods).toFixed(2) : '').padStart(8)}  ${(r.conflicts / r.pods).toFixed(2).padStart(13)}  ${(counted ? (r.calls / r.pods).toFixed(2) : '').padStart(9)}  ${(counted ? (r.requests / r.pods).toFixed(2) : '').padStart(8)}  ${mib(r.peakRss).padStart(9)}  ${r.idleRss ? mib(r.idleRss).padStart(9) : ''}`,
      );
    }
    lines.push('  kubeloop / Go, same run (goals: throughput >= 1.0x, CPU per pod <= 1.5x)');
    for (const c of comparisons.filter((c) => c.mode.name === mode.name)) {
      lines.push(
        `    ${`${c.work} ${c.pods}`.padEnd(14)} throughput ${x(c.throughput)} (${c.podsPerSecond.kubeloop.toFixed(0)} vs ${c.podsPerSecond.go.toFixed(0)} pods/s)` +
          `  CPU per pod ${x(c.cpu)} (router ${c.cpuPerPod.router.toFixed(2)} + function ${c.cpuPerPod.function.toFixed(2)} vs ${c.cpuPerPod.go.toFixed(2)} ms; router alone ${x(c.routerCpu)})` +
          `  first action ${sec(c.firstLabelMs.kubeloop)} vs ${sec(c.firstLabelMs.go)}  peak RSS ${mib(c.peakRss.kubeloop)} vs ${mib(c.peakRss.go)} (${x(c.rss)}, router alone)` +
          `  HTTP reqs/pod ${c.requestsPerPod.toFixed(2)}  p99 ${c.p99.kubeloop.toFixed(0)} vs ${c.p99.go.toFixed(0)} ms`,
      );
    }
    for (const variant of Object.keys(VARIANTS) as Variant[]) lines.push(...formatVariant(ofMode, variant));
    lines.push(...formatFloor(ofMode));
  }
  for (const r of runs) {
    if (!r.atPeak) continue;
    const spaces = Object.entries(r.atPeak.spaces).filter(([, bytes]) => bytes >= MiB).map(([name, bytes]) => `${name.replace(/_space$/, '')} ${mib(bytes)}`);
    lines.push(`  router at its peak RSS, ${r.mode.name} ${r.work} ${r.pods}: RSS ${mib(r.atPeak.rss)} = V8 heap spaces (${spaces.join(', ')}), external ${mib(r.atPeak.external)}, and the rest (Node, code, stacks, malloc)`);
  }
  lines.push(...formatStartCpu(runs));
  lines.push(...formatNative(runs));
  lines.push(...formatFunctionCalls(runs));
  const idleK = runs.filter((r) => r.side === 'kubeloop' && r.idleRss > 0);
  const peak2k = runs.filter((r) => r.side === 'kubeloop' && r.pods >= 2000);
  lines.push(`  router RSS: idle ${idleK.length ? mib(mean(idleK, (r) => r.idleRss)) : 'n/a'} (goal <= 70 MiB), peak with >= 2,000 pods ${peak2k.length ? mib(Math.max(...peak2k.map((r) => r.peakRss))) : 'n/a'} (goal <= 120 MiB)`);
  const functionPeaks = runs.flatMap((r) => (r.functionPeakRss ? [r.functionPeakRss] : []));
  if (functionPeaks.length) lines.push(`  function (pod-name-label) peak RSS over all runs: ${mib(Math.max(...functionPeaks))} (goal <= 60 MiB; bench:function-memory for idle and peak alone)`);
  return lines;
}

/**
 * Start-up CPU (process start to synced, no pods yet: the live runs' reading) beside the CPU of each item with pods
 * already there, which counts it from the process start: how much of that item's CPU per pod is the start.
 */
export function formatStartCpu(runs: VersusRun[]): string[] {
  const lines: string[] = [];
  for (const mode of new Set(runs.map((r) => r.mode.name))) {
    const start = (side: Side) => {
      const live = runs.filter((r) => r.mode.name === mode && r.side === side && r.startCpuMs !== undefined);
      return live.length ? mean(live, (r) => r.startCpuMs ?? 0) : undefined;
    };
    const k = start('kubeloop');
    const g = start('go');
    if (k === undefined || g === undefined) continue;
    const items = runs.filter((r) => r.mode.name === mode && r.work === 'existing' && (r.side === 'kubeloop' || r.side === 'go'));
    const perPod = [...new Set(items.map((r) => r.pods))].map((pods) => {
      const of = (side: Side) => items.filter((r) => r.side === side && r.pods === pods);
      const kube = of('kubeloop');
      const go = of('go');
      if (kube.length === 0 || go.length === 0) return '';
      const after = (rs: VersusRun[], startMs: number) => (mean(rs, (r) => r.cpuMs) - startMs) / pods;
      return `; existing ${pods}: start ${(k / pods).toFixed(2)} vs ${(g / pods).toFixed(2)} ms/pod, the rest ${after(kube, k).toFixed(2)} vs ${after(go, g).toFixed(2)} ms/pod (router alone ${x(after(kube, k) / after(go, g))})`;
    });
    // A variant's own start (the baseline tree's router, for a change to start-up), beside the default's.
    const variants = [...new Set(runs.filter((r) => r.mode.name === mode && r.side !== 'kubeloop' && r.side !== 'go').map((r) => r.side))];
    const theirs = variants.flatMap((side) => {
      const ms = start(side);
      return ms === undefined ? [] : [`${side} ${ms.toFixed(0)} ms`];
    });
    const beside = theirs.length ? ` (${theirs.join(', ')})` : '';
    lines.push(`  start-up CPU, ${mode} (process start to synced, no pods): router ${k.toFixed(0)} ms${beside} vs Go ${g.toFixed(0)} ms${perPod.join('')}`);
  }
  return lines;
}

/**
 * The router's mean function call per side (each round's in brackets) and by the side's place in its round, per
 * mode and work item: the same function process serves every side, so a place that costs more shows here.
 */
export function formatFunctionCalls(runs: VersusRun[]): string[] {
  const timed = runs.filter((r) => r.functionCallMs !== undefined);
  const ms = (rs: VersusRun[]) => mean(rs, (r) => r.functionCallMs ?? 0).toFixed(1);
  const lines = [...new Set(timed.map(itemKey))].map((key) => {
    const item = timed.filter((r) => itemKey(r) === key);
    const sides = [...new Set(item.map((r) => r.side))].map((side) => {
      const of = item.filter((r) => r.side === side);
      return `${side} ${ms(of)}${of.length > 1 ? ` (${of.map((r) => r.functionCallMs!.toFixed(1)).join(', ')})` : ''}`;
    });
    const places = [...new Set(item.flatMap((r) => (r.position === undefined ? [] : [r.position])))].sort((a, b) => a - b);
    const byPlace = places.map((place) => `${['1st', '2nd', '3rd'][place] ?? `${place + 1}th`} ${ms(item.filter((r) => r.position === place))}`);
    return `    ${key.padEnd(22)} ${sides.join(', ')}${byPlace.length > 1 ? `; by place in the round: ${byPlace.join(', ')}` : ''}`;
  });
  return lines.length === 0 ? [] : ["  the function call, the router's mean in ms per side (each round's in brackets) and by the side's place in its round", ...lines];
}

export interface FloorComparison {
  work: Work;
  pods: number;
  /** CPU ms per pod: the Node floor, Go, kubeloop's router and function. */
  cpuPerPod: { floor: number; go: number; router: number; function: number };
  /** The floor's CPU per pod over Go's: what Node costs doing the least the work needs. */
  floorToGo: number;
  /** kubeloop's CPU per pod (router + function) over the floor's. */
  kubeloopToFloor: number;
  /** Time for the same pods: Go's over the floor's (> 1: the floor faster). */
  throughput: number;
  peakRss: { floor: number; go: number };
  /** The floor with the function hop (node-floor-hop), when it ran: its CPU ms per pod, controller and function. */
  hop?: { controller: number; function: number };
}

/** The Node floor against Go and kubeloop, per work item of one mode that has all three. */
export function compareFloor(runs: VersusRun[]): FloorComparison[] {
  const comparisons: FloorComparison[] = [];
  for (const { kubeloop: k, 'node-floor': f, 'node-floor-hop': h, go: g } of bySide(runs)) {
    const first = f[0];
    if (!first || k.length === 0 || g.length === 0) continue;
    const cpuPerPod = { floor: perPod(f, (r) => r.cpuMs), go: perPod(g, (r) => r.cpuMs), router: perPod(k, (r) => r.cpuMs), function: perPod(k, (r) => r.functionCpuMs) };
    comparisons.push({
      ...(h.length > 0 ? { hop: { controller: perPod(h, (r) => r.cpuMs), function: perPod(h, (r) => r.functionCpuMs) } } : {}),
      work: first.work,
      pods: first.pods,
      cpuPerPod,
      floorToGo: cpuPerPod.floor / cpuPerPod.go,
      kubeloopToFloor: (cpuPerPod.router + cpuPerPod.function) / cpuPerPod.floor,
      throughput: mean(g, (r) => r.totalMs) / mean(f, (r) => r.totalMs),
      peakRss: { floor: mean(f, (r) => r.peakRss), go: mean(g, (r) => r.peakRss) },
    });
  }
  return comparisons;
}

/**
 * The Node floor's lines: its CPU per pod against Go's (what the runtime costs at the least), and kubeloop's above
 * it in ms per pod and in Go's units: the part of the gap that kubeloop's own design carries.
 */
function formatFloor(runs: VersusRun[]): string[] {
  const lines = compareFloor(runs).flatMap((c) => {
    const kubeloop = c.cpuPerPod.router + c.cpuPerPod.function;
    const above = kubeloop - c.cpuPerPod.floor;
    const item = `${c.work} ${c.pods}`.padEnd(14);
    const floor =
      `    ${item} CPU per pod floor ${c.cpuPerPod.floor.toFixed(2)} vs Go ${c.cpuPerPod.go.toFixed(2)} ms (${x(c.floorToGo)})` +
      `; kubeloop ${kubeloop.toFixed(2)} ms = floor + ${above.toFixed(2)} (${x(c.kubeloopToFloor)} the floor; the part above it ${(above / c.cpuPerPod.go).toFixed(2)} of Go's CPU per pod)` +
      `  throughput floor / Go ${x(c.throughput)}  peak RSS ${mib(c.peakRss.floor)} vs ${mib(c.peakRss.go)}`;
    if (!c.hop) return [floor];
    // The hop priced alone: the floor asking the function, against the floor deciding itself; kubeloop against both.
    const withHop = c.hop.controller + c.hop.function;
    const hop = withHop - c.cpuPerPod.floor;
    return [
      floor,
      `    ${item} floor + the function hop ${withHop.toFixed(2)} ms (controller ${c.hop.controller.toFixed(2)} + function ${c.hop.function.toFixed(2)}; ${x(withHop / c.cpuPerPod.go)} Go's): the hop ${hop.toFixed(2)} ms per pod (${(hop / c.cpuPerPod.go).toFixed(2)} of Go's CPU per pod)` +
        `; kubeloop above the floor with the hop ${(kubeloop - withHop).toFixed(2)} ms (${((kubeloop - withHop) / c.cpuPerPod.go).toFixed(2)} of Go's)`,
    ];
  });
  return lines.length === 0 ? [] : ["  Node's floor (bench/node-floor-controller.ts: list, watch and PATCH on node:http2, nothing else; with the hop: one POST per pod to the function) vs Go and kubeloop, same run", ...lines];
}

/** The default against one variant, same mode and run: requests, CPU of router and function, time, latency. */
function formatVariant(runs: VersusRun[], variant: Variant): string[] {
  const lines: string[] = [];
  for (const { kubeloop: b, [variant]: u } of bySide(runs)) {
    const first = b[0];
    if (!first || u.length === 0) continue;
    lines.push(
      `    ${`${first.work} ${first.pods}`.padEnd(14)} HTTP requests/pod ${perPod(b, (r) => r.requests).toFixed(2)} vs ${perPod(u, (r) => r.requests).toFixed(2)}` +
        `  CPU ms/pod router ${perPod(b, (r) => r.cpuMs).toFixed(2)} vs ${perPod(u, (r) => r.cpuMs).toFixed(2)} (${x(mean(b, (r) => r.cpuMs) / mean(u, (r) => r.cpuMs))}), function ${perPod(b, (r) => r.functionCpuMs).toFixed(2)} vs ${perPod(u, (r) => r.functionCpuMs).toFixed(2)}` +
        ` (total ${x(mean(b, (r) => r.cpuMs + r.functionCpuMs) / mean(u, (r) => r.cpuMs + r.functionCpuMs))})` +
        `  all labelled ${sec(mean(b, (r) => r.totalMs))} vs ${sec(mean(u, (r) => r.totalMs))}  first action ${sec(mean(b, (r) => r.firstLabelMs))} vs ${sec(mean(u, (r) => r.firstLabelMs))}  p50 ${mean(b, (r) => r.p50).toFixed(0)} vs ${mean(u, (r) => r.p50).toFixed(0)} ms  p99 ${mean(b, (r) => r.p99).toFixed(0)} vs ${mean(u, (r) => r.p99).toFixed(0)} ms`,
    );
  }
  return lines.length === 0 ? [] : [`  ${VARIANTS[variant]}`, ...lines];
}

/** BENCH_VS_GO_MODES ("capped,uncapped" by default) with each mode's QPS; burst twice the QPS. */
export function limitModes(names: string, cappedQps: number, uncappedQps: number): LimitMode[] {
  return names
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .map((name) => {
      if (name !== 'capped' && name !== 'uncapped') throw new Error(`BENCH_VS_GO_MODES: "${name}" is neither capped nor uncapped`);
      const qps = name === 'capped' ? cappedQps : uncappedQps;
      if (!(qps > 0)) throw new Error(`the ${name} mode's QPS must be a positive number, got ${qps}`);
      return { name, qps, burst: qps * 2 };
    });
}

/** BENCH_VS_GO_WORK ("existing,live" by default): which work items to run, in the order given. */
export function workItems(names: string): Work[] {
  const items = names
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .map((name) => {
      if (name !== 'existing' && name !== 'live') throw new Error(`BENCH_VS_GO_WORK: "${name}" is neither existing nor live`);
      return name;
    });
  if (items.length === 0) throw new Error('BENCH_VS_GO_WORK names no work item: give existing, live or both');
  return items;
}

/**
 * BENCH_PERF: each side's CPU from ready to all labelled, by what ran, summed over its rounds per work item: where
 * kubeloop's CPU per pod goes beside the floor's and Go's (a stripped Go binary splits into kernel and the rest).
 */
export function formatNative(runs: VersusRun[]): string[] {
  const sampled = runs.filter((r) => r.native);
  if (sampled.length === 0) return [];
  const lines = ['  where the CPU went, from ready (the router: its Loops synced) to all labelled (BENCH_PERF: perf samples, summed over rounds; ms per pod)'];
  for (const key of new Set(sampled.map(itemKey))) {
    const item = sampled.filter((r) => itemKey(r) === key);
    for (const side of new Set(item.map((r) => r.side))) {
      const of = item.filter((r) => r.side === side);
      const split: NativeSplit = {};
      for (const r of of) for (const c of CATEGORIES) if (r.native![c]) split[c] = (split[c] ?? 0) + r.native![c]!;
      lines.push(`    ${key} ${side.padEnd(14)} ${formatSplit(split, of.reduce((sum, r) => sum + r.pods, 0))}`);
    }
  }
  return lines;
}
