import { describe, expect, it } from 'vitest';
import { loopRows, renderTable, statusPrinter, type LoopRow } from './live-status.ts';
import { parsePrometheusText } from './prometheus-text.ts';

const before = parsePrometheusText(`
kubeloop_router_reconcile_duration_seconds_bucket{le="0.005",loop="podset",result="ok"} 1
kubeloop_router_reconcile_duration_seconds_bucket{le="0.05",loop="podset",result="ok"} 2
kubeloop_router_reconcile_duration_seconds_bucket{le="+Inf",loop="podset",result="ok"} 2
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="ok"} 2
`);
const now = parsePrometheusText(`
workqueue_depth{name="podset",controller="podset"} 4
controller_runtime_active_workers{controller="podset"} 1
kubeloop_router_reconcile_duration_seconds_bucket{le="0.005",loop="podset",result="ok"} 1
kubeloop_router_reconcile_duration_seconds_bucket{le="0.05",loop="podset",result="ok"} 5
kubeloop_router_reconcile_duration_seconds_bucket{le="+Inf",loop="podset",result="ok"} 5
kubeloop_router_reconcile_duration_seconds_bucket{le="0.005",loop="podset",result="error"} 0
kubeloop_router_reconcile_duration_seconds_bucket{le="0.05",loop="podset",result="error"} 0
kubeloop_router_reconcile_duration_seconds_bucket{le="+Inf",loop="podset",result="error"} 1
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="ok"} 5
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="error"} 1
`);

function sink(isTTY: boolean): { out: { write(t: string): boolean; isTTY: boolean }; text(): string } {
  let written = '';
  return { out: { isTTY, write: (t: string) => ((written += t), true) }, text: () => written };
}

describe('live status', () => {
  const readiness = new Map([
    ['podset', 'True'],
    ['at', 'False (FunctionUnreachable)'],
  ]);

  it('reports queue, in-flight, totals, errors and the latency of reconciles since the last poll, per Loop', () => {
    const rows = loopRows(readiness, now, before);
    expect(rows).toEqual<LoopRow[]>([
      { loop: 'at', ready: 'False (FunctionUnreachable)', queue: 0, inFlight: 0, total: 0, errors: 0, recent: 0 },
      { loop: 'podset', ready: 'True', queue: 4, inFlight: 1, total: 6, errors: 1, recent: 4, p50: 0.05, p99: Infinity },
    ]);
    expect(renderTable(rows)[0]).toMatch(/^LOOP\s+READY\s+QUEUE/);
  });

  it('prints plain lines without escape codes when not on a terminal, only for Loops that changed', () => {
    const { out, text } = sink(false);
    const printer = statusPrinter(out);
    const rows = loopRows(readiness, now, before);
    printer.print(rows, new Date('2026-11-22T10:00:00Z'));
    printer.print(rows, new Date('2026-11-22T10:00:02Z'));
    printer.print(rows.map((r) => (r.loop === 'at' ? { ...r, queue: 1 } : r)), new Date('2026-11-22T10:00:04Z'));
    expect(text()).not.toContain('\x1b');
    expect(text().trim().split('\n')).toHaveLength(3);
    expect(text().trim().split('\n')[2]).toMatch(/^\[status 2026-11-22T10:00:04.000Z\] loop=at .*queue=1/);
    expect(text()).toContain('loop=podset ready=True queue=4 inFlight=1 reconciles=6 errors=1 recent=+4');
  });

  it('redraws the table in place on a terminal', () => {
    const { out, text } = sink(true);
    const printer = statusPrinter(out);
    const rows = loopRows(readiness, now, before);
    printer.print(rows, new Date('2026-11-22T10:00:00Z'));
    printer.print(rows, new Date('2026-11-22T10:00:02Z'));
    expect(text()).toContain('\x1b[4A\x1b[J');
  });
});
