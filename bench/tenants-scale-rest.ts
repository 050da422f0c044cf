// bench:tenants-scale at rest, the pure part: what the router (or gateway) did over the rest window, from two
// readings of its CPU (/proc schedstat, ns) and wake-ups and two scrapes of its /metrics around them. The counts
// (API requests, informer events, queue adds, function calls, wake-ups) do not depend on the machine's load.
import { delta, type Sample } from './process-figures.ts';

/** One side of the window: the /metrics scrape (with when it was answered) and the /proc readings. */
export interface RestReading {
  samples: Sample[];
  /** performance.now() when the scrape was answered. */
  scrapedAt: number;
  /** CPU of all the process's threads (schedstat, ns resolution), ms. */
  cpuMs: number;
  /** Times the main thread went to sleep (voluntary context switches): its event loop's wake-ups. */
  wakeups: number;
  /** performance.now() when cpuMs and wakeups were read. */
  readAt: number;
}

/** What the process did at rest, per second of wall time. */
export interface RestActivity {
  seconds: number;
  /** CPU ms per s from schedstat, read between the scrapes: no scrape's own CPU in it. */
  cpuMsPerS: number;
  /**
   * The same from the process's own /metrics (prom-client's process_cpu_seconds_total: process.cpuUsage(), us),
   * scrape to scrape: it holds the first scrape's CPU after its reading, so it reads above cpuMsPerS by about one
   * scrape's cost over the window.
   */
  metricsCpuMsPerS: number;
  wakeupsPerS: number;
  /** API requests sent per s, by method (rest_client_requests_total; a watch re-opened is a GET). */
  requestsPerS: Record<string, number>;
  /** Objects added, changed or deleted in the informer caches per s, and by resource (those with any). */
  informerEventsPerS: number;
  informerEventsByResource: Record<string, number>;
  /** Watch bookmarks received per s (kubeloop_router_watch_bookmarks_total): the API server's, ~1 a minute per watch. */
  bookmarksPerS: number;
  /** Keys added to the Loops' queues per s (a resync, a review, an event). */
  queueAddsPerS: number;
  functionCallsPerS: number;
}

/** A counter's growth between the scrapes per value of one label, values that did not grow left out. */
const byLabel = (before: Sample[], after: Sample[], name: string, label: string): Record<string, number> => {
  const values = new Set(after.filter((s) => s.name === name).map((s) => s.labels[label] ?? ''));
  return Object.fromEntries([...values].sort().map((v) => [v, delta(before, after, name, { [label]: v })] as const).filter(([, n]) => n > 0));
};

export function restActivity(before: RestReading, after: RestReading): RestActivity {
  const readSeconds = (after.readAt - before.readAt) / 1000;
  const scrapeSeconds = (after.scrapedAt - before.scrapedAt) / 1000;
  const perScrapeSecond = (name: string) => delta(before.samples, after.samples, name) / scrapeSeconds;
  return {
    seconds: readSeconds,
    cpuMsPerS: (after.cpuMs - before.cpuMs) / readSeconds,
    metricsCpuMsPerS: (delta(before.samples, after.samples, 'process_cpu_seconds_total') * 1000) / scrapeSeconds,
    wakeupsPerS: (after.wakeups - before.wakeups) / readSeconds,
    requestsPerS: perSecond(byLabel(before.samples, after.samples, 'rest_client_requests_total', 'method'), scrapeSeconds),
    informerEventsPerS: perScrapeSecond('kubeloop_router_informer_events_total'),
    informerEventsByResource: perSecond(byLabel(before.samples, after.samples, 'kubeloop_router_informer_events_total', 'resource'), scrapeSeconds),
    bookmarksPerS: perScrapeSecond('kubeloop_router_watch_bookmarks_total'),
    queueAddsPerS: perScrapeSecond('workqueue_adds_total'),
    functionCallsPerS: perScrapeSecond('kubeloop_router_function_calls_total'),
  };
}

const perSecond = (counts: Record<string, number>, seconds: number) => Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, n / seconds]));

export const requestsPerS = (a: RestActivity): number => Object.values(a.requestsPerS).reduce((sum, n) => sum + n, 0);

/** What one added tenant costs at rest between two sizes: CPU in us/s, counts per hour (periods are minutes). */
export interface RestCost {
  cpuUsPerS: number;
  metricsCpuUsPerS: number;
  wakeupsPerHour: number;
  requestsPerHour: number;
  informerEventsPerHour: number;
  bookmarksPerHour: number;
  queueAddsPerHour: number;
  functionCallsPerHour: number;
}

export function restCost(a: RestActivity, b: RestActivity, added: number): RestCost {
  const per = (f: (x: RestActivity) => number, scale: number) => ((f(b) - f(a)) * scale) / added;
  return {
    cpuUsPerS: per((x) => x.cpuMsPerS, 1000),
    metricsCpuUsPerS: per((x) => x.metricsCpuMsPerS, 1000),
    wakeupsPerHour: per((x) => x.wakeupsPerS, 3600),
    requestsPerHour: per(requestsPerS, 3600),
    informerEventsPerHour: per((x) => x.informerEventsPerS, 3600),
    bookmarksPerHour: per((x) => x.bookmarksPerS, 3600),
    queueAddsPerHour: per((x) => x.queueAddsPerS, 3600),
    functionCallsPerHour: per((x) => x.functionCallsPerS, 3600),
  };
}

/** "GET 1.20/s, POST 0.03/s" (those with none left out). */
export function formatRates(rates: Record<string, number>): string {
  const some = Object.entries(rates).filter(([, n]) => n > 0);
  return some.length === 0 ? 'none' : some.map(([m, n]) => `${m} ${n.toFixed(2)}/s`).join(', ');
}

/** One line per process at one size: what it did at rest. */
export function formatRest(a: RestActivity): string {
  return `at rest over ${a.seconds.toFixed(1)} s: CPU ${a.cpuMsPerS.toFixed(3)} ms/s (its /metrics: ${a.metricsCpuMsPerS.toFixed(3)}), ${a.wakeupsPerS.toFixed(1)} wake-ups/s, API requests ${formatRates(a.requestsPerS)}, informer events ${a.informerEventsPerS.toFixed(2)}/s${a.informerEventsPerS > 0 ? ` (${formatRates(a.informerEventsByResource)})` : ''}, bookmarks ${a.bookmarksPerS.toFixed(2)}/s, queue adds ${a.queueAddsPerS.toFixed(2)}/s, function calls ${a.functionCallsPerS.toFixed(2)}/s`;
}

/**
 * The controller-runtime baseline's window: CPU and its API requests (client-go's rest_client_requests_total). Its
 * watches' bookmarks and its wake-ups are not counted: client-go has no metric for the one, and the other is spread
 * over a Go process's threads.
 */
export function formatBaselineRest(a: RestActivity): string {
  return `at rest over ${a.seconds.toFixed(1)} s: CPU ${a.cpuMsPerS.toFixed(3)} ms/s, API requests ${formatRates(a.requestsPerS)}`;
}

/** "2.10x", or "n/a" where either did not grow (a ratio of noise around zero says nothing). */
export const ratioOf = (value: number, baseline: number): string => (value > 0 && baseline > 0 ? `${(value / baseline).toFixed(2)}x` : 'n/a');

/** The same per added tenant, and the router's over it. */
export function formatBaselineRestCost(baseline: RestCost, router: RestCost | undefined): string {
  const ratio = router ? `; the router's ${router.cpuUsPerS.toFixed(2)} us/s is ${ratioOf(router.cpuUsPerS, baseline.cpuUsPerS)}` : '';
  return `CPU ${baseline.cpuUsPerS.toFixed(2)} us/s, ${baseline.requestsPerHour.toFixed(1)} API requests per hour${ratio}`;
}

export function formatRestCost(c: RestCost): string {
  return `CPU ${c.cpuUsPerS.toFixed(2)} us/s (its /metrics ${c.metricsCpuUsPerS.toFixed(2)}), per hour: ${c.wakeupsPerHour.toFixed(0)} wake-ups, ${c.requestsPerHour.toFixed(1)} API requests, ${c.informerEventsPerHour.toFixed(1)} informer events, ${c.bookmarksPerHour.toFixed(1)} watch bookmarks, ${c.queueAddsPerHour.toFixed(1)} queue adds, ${c.functionCallsPerHour.toFixed(1)} function calls`;
}
