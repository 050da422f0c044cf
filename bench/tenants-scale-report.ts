// bench:tenants-scale, the pure part: the sizes to run, the cost of each added tenant between two sizes, and
// the report. Figures come from one run; per-tenant costs are differences between its sizes.
import { percentile } from './router-bench-kit.ts';
import { formatBaselineRest, formatBaselineRestCost, formatRest, formatRestCost, ratioOf, restCost, type RestActivity, type RestCost } from './tenants-scale-rest.ts';

/** A quiet tenant's p99 alone and with busy neighbours, and the changes each is drawn from. */
export interface QuietP99s {
  aloneP99: number;
  busyP99: number;
  samples: { alone: number; busy: number };
  /** With BENCH_QUIET_ROUNDS > 1: each round's pair (alone, then busy), in order; the figures above pool them. */
  rounds?: Array<{ aloneP99: number; busyP99: number }>;
  /**
   * The quiet PATCH's own round trip (sent -> answered), pooled the same way: the API server's part, before any
   * controller sees the change. Its ratio is what the total's would be with a controller that cost nothing.
   */
  writeOnly?: { aloneP99: number; busyP99: number };
}

/**
 * The p99s of alternating phases' latencies (ms): alone[i] and busy[i] are round i's. The changes of every round are
 * pooled for the figure, so a p99 is drawn from more changes; the rounds are kept to show how much it moves.
 */
export function quietP99s(alone: number[][], busy: number[][], writes?: { alone: number[][]; busy: number[][] }): QuietP99s {
  const rounds = alone.map((a, i) => ({ aloneP99: percentile(a, 99), busyP99: percentile(busy[i] ?? [], 99) }));
  const [allAlone, allBusy] = [alone.flat(), busy.flat()];
  return {
    aloneP99: percentile(allAlone, 99),
    busyP99: percentile(allBusy, 99),
    samples: { alone: allAlone.length, busy: allBusy.length },
    ...(rounds.length > 1 ? { rounds } : {}),
    ...(writes ? { writeOnly: { aloneP99: percentile(writes.alone.flat(), 99), busyP99: percentile(writes.busy.flat(), 99) } } : {}),
  };
}

const drawnFrom = (q: QuietP99s) => `${q.samples.alone} / ${q.samples.busy} changes`;
const ratio = (r: { aloneP99: number; busyP99: number }) => r.busyP99 / r.aloneP99;

/** Each round's p99s and ratio, then the ratios' range: how far one round's reading is from the pooled one. */
function formatRounds(q: QuietP99s): string {
  const rounds = q.rounds ?? [];
  const ratios = rounds.map(ratio);
  const each = rounds.map((r, i) => `${i + 1}: ${r.aloneP99.toFixed(0)} / ${r.busyP99.toFixed(0)} ms ${ratio(r).toFixed(2)}`).join('; ');
  return `by round (alone / busy, ratio) ${each}; ratios ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}, pooled ${ratio(q).toFixed(2)}`;
}

/** Beside a p99 pair: the quiet PATCH's own round trip, the part no controller can take off. */
function formatWriteOnly(q: QuietP99s): string {
  const w = q.writeOnly;
  return w ? `; of it the quiet PATCH's own round trip (before any controller sees the change) p99 ${w.aloneP99.toFixed(0)} / ${w.busyP99.toFixed(0)} ms, ratio ${ratio(w).toFixed(2)}` : '';
}

/** What one size (tenants with a Loop each, every tenth with an AdmissionHook) measured. */
export interface ScaleRow {
  tenants: number;
  hooks: number;
  /** Router and gateway at rest: RSS (bytes) and CPU (ms of CPU per second of wall time, over the rest window). */
  router: { rss: number; cpuMsPerS: number };
  gateway: { rss: number; cpuMsPerS: number };
  /** What each did over the rest window: CPU at ns resolution, wake-ups, API requests, events (tenants-scale-rest.ts). */
  routerRest?: RestActivity;
  gatewayRest?: RestActivity;
  /** Waited after every Loop reconciled until the router handled no event and sent no write for a while, ms. */
  settleMs?: number;
  /** WATCH requests the API server holds open for the router (its count with the router minus without). */
  watches: number;
  /** Samples on the router's /metrics (series, histogram buckets counted one by one). */
  series: number;
  /** The router's CPU for one scrape of /metrics (10 ms ticks). */
  scrapeCpuMs: number;
  /** From the first create of this size's new tenants until every Loop is Ready; the creates alone took createMs. */
  readyMs: number;
  createMs: number;
  /** Quiet tenant: its change written -> its function called, alone and while the busy tenants work. */
  quiet: QuietP99s;
  /** The same with every tenant's writes (the quiet one's and the busy ones') made as its ServiceAccount (APF sees each apart). */
  quietAsTenants?: QuietP99s;
  /** The same again with an APF level of `shares` for ServiceAccounts (tenants-scale-apf.ts). */
  quietApf?: QuietP99s & { shares: number };
  /** A dry-run ConfigMap create through the API server in a namespace with a hook and in one without. */
  admission: { hookedP99: number; unhookedP99: number };
  /** Router restart: spawn -> every tenant's Loop has called its function again. */
  restartConvergeMs: number;
  /**
   * With BENCH_RESTART_ARGS: the restart as configured and the same restart with those router flags right
   * after, each with the router's open watches and RSS once converged, so both sides compare alike.
   */
  restartWithArgs?: { args: string; configured: AfterRestart; withArgs: AfterRestart };
  /** The restarted router's /metrics once converged (samples, CPU for one scrape). */
  restartScrape?: Scrape;
  /**
   * controller-runtime over the same namespaces (a cache each), at rest in the router's window: its RSS (bytes) at the
   * window's end, what it did, spawn -> its caches synced (ms), and its reconciles that found a copy unlike its ConfigMap.
   */
  baseline?: { rss: number; rest: RestActivity; syncMs: number; differs: number };
  /** The quiet tenant's p99s (as admin) with controller-runtime writing the copies in the router's place: change -> its reconcile. */
  baselineQuiet?: QuietP99s;
}

/** One router restart: spawn -> every tenant called again (ms); then its open watches and RSS (bytes). */
export interface AfterRestart {
  ms: number;
  watches: number;
  rss: number;
  /** Its /metrics once converged: the same state for both restarts, whatever the flags. */
  scrape?: Scrape;
  /** What it did at rest after that, over the rest window (with BENCH_RESTART_ARGS: both restarts alike). */
  rest?: RestActivity;
}

/** One scrape of the router's /metrics: its samples and the router's CPU for it (10 ms ticks). */
export interface Scrape {
  series: number;
  scrapeCpuMs: number;
}

/** Cost of one added tenant between two consecutive sizes. */
export interface TenantCost {
  from: number;
  to: number;
  routerRssMiB: number;
  routerCpuMsPerS: number;
  gatewayRssMiB: number;
  watches: number;
  series: number;
  restartMs: number;
  /** At rest, per added tenant, where both sizes measured it. */
  routerRest?: RestCost;
  gatewayRest?: RestCost;
  /** controller-runtime over the same namespaces, where both sizes ran it. */
  baseline?: { rssMiB: number; rest: RestCost };
}

const MiB = 1024 * 1024;

/** "10,100,1000" -> [10, 100, 1000], ascending, each a positive integer; the error names the setting. */
export function parseSizes(value: string, setting = 'BENCH_TENANTS'): number[] {
  const sizes = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${setting}: "${s}" is not a positive whole number of tenants`);
      return n;
    });
  if (sizes.length === 0) throw new Error(`${setting}: no size given (e.g. 10,100,1000)`);
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** Tenants 0, 10, 20... get an AdmissionHook: a tenth of them, rounded up. */
export const hooked = (tenant: number): boolean => tenant % 10 === 0;
export const hooksAt = (tenants: number): number => Math.ceil(tenants / 10);

export function tenantCosts(rows: ScaleRow[]): TenantCost[] {
  const costs: TenantCost[] = [];
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!;
    const b = rows[i]!;
    const added = b.tenants - a.tenants;
    costs.push({
      from: a.tenants,
      to: b.tenants,
      routerRssMiB: (b.router.rss - a.router.rss) / MiB / added,
      routerCpuMsPerS: (b.router.cpuMsPerS - a.router.cpuMsPerS) / added,
      gatewayRssMiB: (b.gateway.rss - a.gateway.rss) / MiB / added,
      watches: (b.watches - a.watches) / added,
      series: (b.series - a.series) / added,
      restartMs: (b.restartConvergeMs - a.restartConvergeMs) / added,
      ...(a.routerRest && b.routerRest ? { routerRest: restCost(a.routerRest, b.routerRest, added) } : {}),
      ...(a.gatewayRest && b.gatewayRest ? { gatewayRest: restCost(a.gatewayRest, b.gatewayRest, added) } : {}),
      ...(a.baseline && b.baseline ? { baseline: { rssMiB: (b.baseline.rss - a.baseline.rss) / MiB / added, rest: restCost(a.baseline.rest, b.baseline.rest, added) } } : {}),
    });
  }
  return costs;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** Per added tenant between consecutive sizes, both restarts: converge time, watches, RSS. */
export function restartCosts(rows: ScaleRow[]): Array<{ from: number; to: number; configured: AfterRestart; withArgs: AfterRestart; rest?: { configured: RestCost; withArgs: RestCost } }> {
  const measured = rows.filter((r) => r.restartWithArgs);
  const perTenant = (a: AfterRestart, b: AfterRestart, added: number): AfterRestart => ({ ms: (b.ms - a.ms) / added, watches: (b.watches - a.watches) / added, rss: (b.rss - a.rss) / added });
  return measured.slice(1).map((b, i) => {
    const a = measured[i]!;
    const added = b.tenants - a.tenants;
    const [ac, aw, bc, bw] = [a.restartWithArgs!.configured.rest, a.restartWithArgs!.withArgs.rest, b.restartWithArgs!.configured.rest, b.restartWithArgs!.withArgs.rest];
    const rest = ac && aw && bc && bw ? { rest: { configured: restCost(ac, bc, added), withArgs: restCost(aw, bw, added) } } : {};
    return { from: a.tenants, to: b.tenants, configured: perTenant(a.restartWithArgs!.configured, b.restartWithArgs!.configured, added), withArgs: perTenant(a.restartWithArgs!.withArgs, b.restartWithArgs!.withArgs, added), ...rest };
  });
}

const side = (s: AfterRestart) => `${sec(s.ms)}, ${s.watches} watches, ${mib(s.rss)}`;

export function formatScale(rows: ScaleRow[], load: string): string[] {
  const lines = [
    '',
    'Tenants: a namespaced Loop each (ConfigMap, owns Secret), every tenth an AdmissionHook; one router, one gateway',
    '  tenants  hooks  router RSS  CPU at rest  gateway RSS  CPU at rest  watches  metric series (scrape CPU)  all Ready  (creates)  quiet p99 alone / busy  ratio  admission p99 hook / none  restart converged',
  ];
  for (const r of rows) {
    lines.push(
      `  ${String(r.tenants).padStart(7)}  ${String(r.hooks).padStart(5)}  ${mib(r.router.rss).padStart(10)}  ${`${r.router.cpuMsPerS.toFixed(2)} ms/s`.padStart(11)}  ${mib(r.gateway.rss).padStart(11)}  ${`${r.gateway.cpuMsPerS.toFixed(2)} ms/s`.padStart(11)}  ${String(r.watches).padStart(7)}  ${`${r.series} (${r.scrapeCpuMs} ms)`.padStart(26)}  ${sec(r.readyMs).padStart(9)}  ${`(${sec(r.createMs)})`.padStart(9)}  ${`${r.quiet.aloneP99.toFixed(0)} / ${r.quiet.busyP99.toFixed(0)} ms`.padStart(22)}  ${ratio(r.quiet).toFixed(2).padStart(5)}  ${`${r.admission.hookedP99.toFixed(1)} / ${r.admission.unhookedP99.toFixed(1)} ms`.padStart(25)}  ${sec(r.restartConvergeMs).padStart(17)}`,
    );
  }
  for (const r of rows) {
    lines.push(`  ${r.tenants} tenants, quiet p99 as admin drawn from ${drawnFrom(r.quiet)} (alone / busy)${r.quiet.rounds ? `; ${formatRounds(r.quiet)}` : ''}${formatWriteOnly(r.quiet)}`);
    const g = r.baselineQuiet;
    if (g) lines.push(`  ${r.tenants} tenants, controller-runtime in the router's place (change -> its reconcile): alone ${g.aloneP99.toFixed(0)} / busy ${g.busyP99.toFixed(0)} ms, ratio ${ratio(g).toFixed(2)} (${drawnFrom(g)})${g.rounds ? `; ${formatRounds(g)}` : ''}${formatWriteOnly(g)}; the router's ratio is ${(ratio(r.quiet) / ratio(g)).toFixed(2)}x its`);
    const q = r.quietAsTenants;
    if (q) lines.push(`  ${r.tenants} tenants, quiet p99 with every tenant writing as its ServiceAccount: alone ${q.aloneP99.toFixed(0)} / busy ${q.busyP99.toFixed(0)} ms, ratio ${ratio(q).toFixed(2)} (${drawnFrom(q)})${q.rounds ? `; ${formatRounds(q)}` : ''}${formatWriteOnly(q)}`);
    const apf = r.quietApf;
    if (apf) lines.push(`  ${r.tenants} tenants, the same with an APF level of ${apf.shares} shares for ServiceAccounts: alone ${apf.aloneP99.toFixed(0)} / busy ${apf.busyP99.toFixed(0)} ms, ratio ${ratio(apf).toFixed(2)} (${drawnFrom(apf)})`);
    if (r.routerRest) lines.push(`  ${r.tenants} tenants, router${r.settleMs === undefined ? '' : ` (idle after ${sec(r.settleMs)})`} ${formatRest(r.routerRest)}`);
    if (r.gatewayRest) lines.push(`  ${r.tenants} tenants, gateway ${formatRest(r.gatewayRest)}`);
    const b = r.baseline;
    if (b) lines.push(`  ${r.tenants} tenants, controller-runtime over the same namespaces (synced ${sec(b.syncMs)} after spawn, ${b.differs} copies unlike their ConfigMap) ${formatBaselineRest(b.rest)}, RSS ${mib(b.rss)}`);
  }
  const costs = tenantCosts(rows);
  if (costs.length > 0) {
    lines.push('  per added tenant (goals: router <= 0.5 MiB and no measurable CPU at rest; restart converged <= 60 s at 1,000)');
    for (const c of costs) {
      lines.push(
        `    ${`${c.from} -> ${c.to}`.padEnd(12)} router RSS ${c.routerRssMiB.toFixed(3)} MiB  CPU at rest ${c.routerCpuMsPerS.toFixed(4)} ms/s  gateway RSS ${c.gatewayRssMiB.toFixed(3)} MiB  watches ${c.watches.toFixed(2)}  metric series ${c.series.toFixed(1)}  restart ${c.restartMs.toFixed(1)} ms`,
      );
      if (c.routerRest) lines.push(`      router at rest: ${formatRestCost(c.routerRest)}`);
      if (c.gatewayRest) lines.push(`      gateway at rest: ${formatRestCost(c.gatewayRest)}`);
      if (c.baseline) lines.push(`      controller-runtime over the same namespaces, at rest: RSS ${c.baseline.rssMiB.toFixed(3)} MiB (the router's is ${ratioOf(c.routerRssMiB, c.baseline.rssMiB)}), ${formatBaselineRestCost(c.baseline.rest, c.routerRest)}`);
    }
  }
  for (const r of rows.filter((r) => r.restartWithArgs)) {
    const { args, configured, withArgs } = r.restartWithArgs!;
    const scrapes = configured.scrape && withArgs.scrape ? `; /metrics after it: ${configured.scrape.series} samples (${configured.scrape.scrapeCpuMs} ms) as configured, ${withArgs.scrape.series} (${withArgs.scrape.scrapeCpuMs} ms) with them` : '';
    lines.push(`  restart at ${r.tenants} tenants, converged / open watches / router RSS: as configured ${side(configured)}; with ${args} ${side(withArgs)} (time ${(withArgs.ms / configured.ms).toFixed(2)}x, RSS ${(withArgs.rss / configured.rss).toFixed(2)}x)${scrapes}`);
    if (configured.rest && withArgs.rest) lines.push(`    then as configured ${formatRest(configured.rest)}\n    with ${args} ${formatRest(withArgs.rest)}`);
  }
  for (const c of restartCosts(rows)) {
    const both = (f: (s: AfterRestart) => string) => `${f(c.configured)} / ${f(c.withArgs)}`;
    lines.push(`    ${`${c.from} -> ${c.to}`.padEnd(12)} per added tenant, as configured / with the flags: restart ${both((s) => `${s.ms.toFixed(1)}`)} ms  watches ${both((s) => s.watches.toFixed(2))}  router RSS ${both((s) => (s.rss / MiB).toFixed(3))} MiB`);
    if (c.rest) lines.push(`      at rest after the restart, per added tenant: as configured ${formatRestCost(c.rest.configured)}; with the flags ${formatRestCost(c.rest.withArgs)}`);
  }
  lines.push(`  (${load}; the quiet tenant's ratio goal: <= 1.5 with 10 busy neighbours)`);
  return lines;
}
