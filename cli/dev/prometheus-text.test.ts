import { describe, expect, it } from 'vitest';
import { bucketsOf, parsePrometheusText, quantileOfDelta, sumBy } from './prometheus-text.ts';

const TEXT = `# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="podset",component="router"} 3
workqueue_depth{name="at",component="router"} 0
kubeloop_router_reconcile_duration_seconds_bucket{le="0.005",loop="podset",result="ok"} 1
kubeloop_router_reconcile_duration_seconds_bucket{le="0.025",loop="podset",result="ok"} 4
kubeloop_router_reconcile_duration_seconds_bucket{le="+Inf",loop="podset",result="ok"} 5
kubeloop_router_reconcile_duration_seconds_bucket{le="0.005",loop="podset",result="error"} 0
kubeloop_router_reconcile_duration_seconds_bucket{le="0.025",loop="podset",result="error"} 0
kubeloop_router_reconcile_duration_seconds_bucket{le="+Inf",loop="podset",result="error"} 1
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="ok"} 5
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="error"} 1
weird_label{path="a \\"quoted\\" value"} 1.5e3
`;

describe('parsePrometheusText', () => {
  it('reads names, labels (with escapes) and values, skipping comments', () => {
    const samples = parsePrometheusText(TEXT);
    expect(samples[0]).toEqual({ name: 'workqueue_depth', labels: { name: 'podset', component: 'router' }, value: 3 });
    expect(samples.at(-1)).toEqual({ name: 'weird_label', labels: { path: 'a "quoted" value' }, value: 1500 });
  });

  it('sums a metric per loop across its other labels', () => {
    const counts = sumBy(parsePrometheusText(TEXT), 'kubeloop_router_reconcile_duration_seconds_count', 'loop');
    expect(counts.get('podset')).toBe(6);
  });

  it('takes quantiles from the buckets filled between two snapshots', () => {
    const after = bucketsOf(parsePrometheusText(TEXT), 'kubeloop_router_reconcile_duration_seconds', 'loop', 'podset');
    expect(after).toEqual([
      [0.005, 1],
      [0.025, 4],
      [Infinity, 6],
    ]);
    expect(quantileOfDelta([], after, 0.5)).toBe(0.025);
    expect(quantileOfDelta([[0.005, 1], [0.025, 1], [Infinity, 1]], after, 0.5)).toBe(0.025);
    expect(quantileOfDelta(after, after, 0.99)).toBeUndefined();
  });
});
