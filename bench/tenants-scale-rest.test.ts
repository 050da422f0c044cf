// bench:tenants-scale at rest: rates come from the right readings, and a tenant's cost is the difference per tenant.
import { describe, expect, it } from 'vitest';
import type { Sample } from './process-figures.ts';
import { formatRest, formatRestCost, requestsPerS, restActivity, restCost, type RestReading } from './tenants-scale-rest.ts';

const sample = (name: string, value: number, labels: Record<string, string> = {}): Sample => ({ name, labels, value });

function reading(at: number, over: { cpuMs: number; wakeups: number; cpuSeconds: number; gets: number; posts: number; events: number; bookmarks: number; adds: number; calls: number }): RestReading {
  return {
    samples: [
      sample('process_cpu_seconds_total', over.cpuSeconds),
      sample('rest_client_requests_total', over.gets, { method: 'GET', code: '200' }),
      sample('rest_client_requests_total', 1, { method: 'GET', code: '410' }),
      sample('rest_client_requests_total', over.posts, { method: 'POST', code: '201' }),
      sample('kubeloop_router_informer_events_total', over.events, { resource: 'v1/ConfigMap' }),
      sample('kubeloop_router_watch_bookmarks_total', over.bookmarks),
      sample('workqueue_adds_total', over.adds, { name: 'a', controller: 'a' }),
      sample('workqueue_adds_total', over.adds, { name: 'b', controller: 'b' }),
      sample('kubeloop_router_function_calls_total', over.calls, { loop: 'a', code: '2xx' }),
    ],
    scrapedAt: at,
    cpuMs: over.cpuMs,
    wakeups: over.wakeups,
    readAt: at + (at === 0 ? 100 : -100),
  };
}

describe('restActivity', () => {
  // /proc read 0.1 s after the first scrape and 0.1 s before the second: 20 s between the readings, 20.2 s between the scrapes.
  const before = reading(0, { cpuMs: 1000, wakeups: 500, cpuSeconds: 2, gets: 10, posts: 3, events: 0, bookmarks: 40, adds: 5, calls: 1 });
  const after = reading(20_200, { cpuMs: 1001.5, wakeups: 2500, cpuSeconds: 2.0303, gets: 30.2, posts: 3, events: 10.1, bookmarks: 45.05, adds: 15.1, calls: 1 });
  const a = restActivity(before, after);

  it('reads CPU and wake-ups over the /proc readings, at sub-millisecond resolution', () => {
    expect(a.seconds).toBeCloseTo(20);
    expect(a.cpuMsPerS).toBeCloseTo(0.075);
    expect(a.wakeupsPerS).toBeCloseTo(100);
  });
  it('reads the counters over the scrapes: CPU by the process itself, requests by method summed over codes (none sent: left out), queues summed over Loops', () => {
    expect(a.metricsCpuMsPerS).toBeCloseTo(1.5);
    expect(a.requestsPerS).toEqual({ GET: expect.closeTo(1, 6) });
    expect(requestsPerS(a)).toBeCloseTo(1);
    expect(a.informerEventsPerS).toBeCloseTo(0.5);
    expect(a.informerEventsByResource).toEqual({ 'v1/ConfigMap': expect.closeTo(0.5, 6) });
    expect(a.bookmarksPerS).toBeCloseTo(0.25);
    expect(a.queueAddsPerS).toBeCloseTo(1);
    expect(a.functionCallsPerS).toBe(0);
  });
  it('prints what was sent and leaves out methods with none', () => {
    expect(formatRest(a)).toBe('at rest over 20.0 s: CPU 0.075 ms/s (its /metrics: 1.500), 100.0 wake-ups/s, API requests GET 1.00/s, informer events 0.50/s (v1/ConfigMap 0.50/s), bookmarks 0.25/s, queue adds 1.00/s, function calls 0.00/s');
  });
});

describe('restCost', () => {
  it('divides what grew at rest by the tenants added: CPU in us/s, counts per hour', () => {
    const at10 = { seconds: 30, cpuMsPerS: 1.2, metricsCpuMsPerS: 1.5, wakeupsPerS: 110, requestsPerS: { GET: 0.1 }, informerEventsPerS: 0, informerEventsByResource: {}, bookmarksPerS: 0.5, queueAddsPerS: 0.01, functionCallsPerS: 0.01 };
    const at100 = { ...at10, cpuMsPerS: 2.1, metricsCpuMsPerS: 3.3, wakeupsPerS: 119, requestsPerS: { GET: 0.4, POST: 0.5 }, bookmarksPerS: 3.5, queueAddsPerS: 0.1, functionCallsPerS: 0.1 };
    const c = restCost(at10, at100, 90);
    expect(c.cpuUsPerS).toBeCloseTo(10);
    expect(c.metricsCpuUsPerS).toBeCloseTo(20);
    expect(c.wakeupsPerHour).toBeCloseTo(360);
    expect(c.requestsPerHour).toBeCloseTo(32);
    expect(c.bookmarksPerHour).toBeCloseTo(120);
    expect(c.queueAddsPerHour).toBeCloseTo(3.6);
    expect(c.functionCallsPerHour).toBeCloseTo(3.6);
    expect(formatRestCost(c)).toBe('CPU 10.00 us/s (its /metrics 20.00), per hour: 360 wake-ups, 32.0 API requests, 0.0 informer events, 120.0 watch bookmarks, 3.6 queue adds, 3.6 function calls');
  });
});
