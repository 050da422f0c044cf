import { describe, expect, it } from 'vitest';
import { createMetricsRegistry, exemplarLatencyHistogram, openMetricsView } from './metrics.ts';
import { createServer } from '../server/create-server.ts';
import { createLogger } from './logger.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('trace ids as exemplars', () => {
  it('are rendered in the OpenMetrics format only, and the Prometheus text stays as it was', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } });
    const calls = exemplarLatencyHistogram(registry, 'kubeloop_router_function_call_seconds', 'Function call round trip', ['loop']);
    calls.observe({ loop: 'podset' }, 0.003, TRACE);
    calls.observe({ loop: 'podset' }, 0.2);
    const open = await openMetricsView(registry).metrics();
    expect(open).toMatch(new RegExp(`kubeloop_router_function_call_seconds_bucket\\{le="0.005",component="router",loop="podset"\\} 1 # \\{trace_id="${TRACE}"\\} 0.003`));
    expect(open.trimEnd().endsWith('# EOF')).toBe(true);
    expect(await registry.metrics()).not.toContain('trace_id');
  });

  it('are served when the scraper asks for OpenMetrics', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    exemplarLatencyHistogram(registry, 'calls_seconds', 'x').observe({}, 0.001, TRACE);
    const { app } = createServer({ logger: createLogger({ name: 't', level: 'silent' }), metrics: registry });
    const open = await app.inject({ url: '/metrics', headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(open.headers['content-type']).toContain('application/openmetrics-text');
    expect(open.body).toContain(`trace_id="${TRACE}"`);
    const plain = await app.inject({ url: '/metrics' });
    expect(plain.headers['content-type']).toContain('text/plain');
    expect(plain.body).not.toContain('trace_id');
    await app.close();
  });
});
