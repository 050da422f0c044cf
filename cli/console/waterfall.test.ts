import { describe, expect, it } from 'vitest';
import type { TraceSpan } from './trace-model.ts';
import { formatDuration, layoutWaterfall } from './waterfall.ts';

const span = (spanId: string, parentSpanId: string | undefined, startUs: number, durationUs: number, name = spanId): TraceSpan => ({
  traceId: 't',
  spanId,
  ...(parentSpanId ? { parentSpanId } : {}),
  name,
  service: 'kubeloop-router',
  startUs,
  durationUs,
  attributes: {},
  events: [],
});

describe('layoutWaterfall', () => {
  it('nests each span under its parent, siblings by start time, placed on the trace time axis', () => {
    const w = layoutWaterfall([span('write', 'root', 1060, 20), span('root', undefined, 1000, 100), span('fn', 'call', 1020, 30), span('call', 'root', 1010, 50), span('queue', 'root', 1000, 10)]);
    expect(w.rows.map((r) => [r.span.spanId, r.depth])).toEqual([
      ['root', 0],
      ['queue', 1],
      ['call', 1],
      ['fn', 2],
      ['write', 1],
    ]);
    expect(w.durationUs).toBe(100);
    expect(w.rows.find((r) => r.span.spanId === 'write')).toMatchObject({ offsetPct: 60, widthPct: 20 });
  });

  it('shows a span whose parent never arrived as a root marked orphan, and survives a parent cycle', () => {
    const w = layoutWaterfall([span('a', 'b', 0, 10), span('b', 'a', 5, 10), span('lost', 'elsewhere', 2, 1)]);
    expect(w.rows.find((r) => r.span.spanId === 'lost')).toMatchObject({ depth: 0, orphan: true });
    expect(w.rows.filter((r) => r.span.spanId !== 'lost')).toHaveLength(0);
  });

  it('lays out an empty trace as no rows', () => {
    expect(layoutWaterfall([]).rows).toEqual([]);
  });
});

describe('formatDuration', () => {
  it('picks a unit that keeps three digits', () => {
    expect([formatDuration(850), formatDuration(1234), formatDuration(12_345), formatDuration(1_250_000)]).toEqual(['850us', '1.23ms', '12.3ms', '1.25s']);
  });
});
