// The live status of `kubeloop dev`: per Loop its Ready condition (from the API server), queue depth and
// calls in flight, and the reconciles since the last poll with their latency (from the router's /metrics).
// On a terminal the table is redrawn in place; otherwise a plain line is printed only when something changed.
import { Agent, request } from 'undici';
import { CLUSTER_LOOP_PLURAL, LOOP_API_VERSION, LOOP_PLURAL } from '../../api/loop.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { identityOf } from '../scoped-names.ts';
import { bucketsOf, parsePrometheusText, quantileOfDelta, sumBy, type MetricSample } from './prometheus-text.ts';

const RECONCILE = 'kubeloop_router_reconcile_duration_seconds';

export interface LoopRow {
  loop: string;
  /** "True", "False (FunctionUnreachable)", or "?" before the router wrote a condition. */
  ready: string;
  queue: number;
  inFlight: number;
  total: number;
  errors: number;
  /** Reconciles since the previous poll, and their latency quantiles in seconds (bucket upper bounds). */
  recent: number;
  p50?: number;
  p99?: number;
}

interface LoopObject {
  metadata: { name: string; namespace?: string };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string }> };
}

/** Ready of every ClusterLoop and namespaced Loop, by identity ("web", "team-a/web"), as the router's metrics label them. */
export async function readLoopReadiness(client: KubeClient): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const plural of [CLUSTER_LOOP_PLURAL, LOOP_PLURAL]) {
    const list = await client.request<{ items: LoopObject[] }>({ path: `/apis/${LOOP_API_VERSION}/${plural}` });
    for (const loop of list.items) {
      const ready = loop.status?.conditions?.find((c) => c.type === 'Ready');
      out.set(identityOf(loop.metadata), !ready ? '?' : ready.status === 'True' ? 'True' : `${ready.status} (${ready.reason ?? 'no reason'})`);
    }
  }
  return out;
}

/** Polls /metrics without keep-alive: nothing is left holding the process open when dev stops. */
const noKeepAlive = new Agent({ pipelining: 0 });

export async function readRouterMetrics(metricsUrl: string): Promise<MetricSample[]> {
  const reply = await request(metricsUrl, { dispatcher: noKeepAlive, headersTimeout: 2000, bodyTimeout: 2000 });
  if (reply.statusCode !== 200) {
    await reply.body.dump();
    throw new Error(`GET ${metricsUrl}: ${reply.statusCode}`);
  }
  return parsePrometheusText(await reply.body.text());
}

/** Builds rows from one metrics snapshot, the previous one (for "recent") and the Loops' readiness. */
export function loopRows(readiness: Map<string, string>, now: MetricSample[], before: MetricSample[]): LoopRow[] {
  const queue = sumBy(now, 'workqueue_depth', 'name');
  const inFlight = sumBy(now, 'controller_runtime_active_workers', 'controller');
  const totals = sumBy(now, `${RECONCILE}_count`, 'loop');
  const previous = sumBy(before, `${RECONCILE}_count`, 'loop');
  const errors = sumBy(now, `${RECONCILE}_count`, 'loop', (labels) => labels.result === 'error');
  const names = new Set([...readiness.keys(), ...queue.keys(), ...totals.keys()]);
  return [...names].sort().map((loop) => {
    const total = totals.get(loop) ?? 0;
    const recent = total - (previous.get(loop) ?? 0);
    const row: LoopRow = {
      loop,
      ready: readiness.get(loop) ?? '?',
      queue: queue.get(loop) ?? 0,
      inFlight: inFlight.get(loop) ?? 0,
      total,
      errors: errors.get(loop) ?? 0,
      recent,
    };
    if (recent > 0) {
      const after = bucketsOf(now, RECONCILE, 'loop', loop);
      const prior = bucketsOf(before, RECONCILE, 'loop', loop);
      const p50 = quantileOfDelta(prior, after, 0.5);
      const p99 = quantileOfDelta(prior, after, 0.99);
      if (p50 !== undefined) row.p50 = p50;
      if (p99 !== undefined) row.p99 = p99;
    }
    return row;
  });
}

function latency(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (!Number.isFinite(seconds)) return '>max';
  return seconds < 1 ? `<=${Math.round(seconds * 1000)}ms` : `<=${seconds}s`;
}

const HEADER = ['LOOP', 'READY', 'QUEUE', 'IN-FLIGHT', 'RECONCILES', 'ERRORS', 'RECENT', 'P50', 'P99'];

export function renderTable(rows: LoopRow[]): string[] {
  const cells = [HEADER, ...rows.map((r) => [r.loop, r.ready, String(r.queue), String(r.inFlight), String(r.total), String(r.errors), `+${r.recent}`, latency(r.p50), latency(r.p99)])];
  const widths = HEADER.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}

/** One plain line per Loop, for logs and CI: no escape codes, printed only when a value changed. */
export function renderPlain(rows: LoopRow[], at: string): string[] {
  return rows.map(
    (r) =>
      `[status ${at}] loop=${r.loop} ready=${r.ready.replace(/ /g, '')} queue=${r.queue} inFlight=${r.inFlight} reconciles=${r.total} errors=${r.errors}` +
      (r.recent > 0 ? ` recent=+${r.recent} p50${latency(r.p50)} p99${latency(r.p99)}` : ''),
  );
}

export interface StatusPrinter {
  print(rows: LoopRow[], now: Date): void;
}

export function statusPrinter(out: NodeJS.WriteStream | { write(text: string): boolean; isTTY?: boolean }): StatusPrinter {
  if (out.isTTY) {
    let drawn = 0;
    return {
      print(rows, now) {
        const lines = [`live status at ${now.toISOString().slice(11, 19)} (Ctrl+C stops everything)`, ...renderTable(rows)];
        // Move up over the previous table and clear to the end of the screen, then redraw.
        out.write((drawn > 0 ? `\x1b[${drawn}A\x1b[J` : '') + lines.join('\n') + '\n');
        drawn = lines.length;
      },
    };
  }
  const last = new Map<string, string>();
  return {
    print(rows, now) {
      // Only Loops whose figures changed (the latency columns alone do not count), so an idle platform is quiet.
      const changed = rows.filter((r) => {
        const key = JSON.stringify([r.ready, r.queue, r.inFlight, r.total, r.errors]);
        if (last.get(r.loop) === key) return false;
        last.set(r.loop, key);
        return true;
      });
      if (changed.length > 0) out.write(renderPlain(changed, now.toISOString()).join('\n') + '\n');
    },
  };
}
