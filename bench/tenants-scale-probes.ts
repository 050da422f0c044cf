// bench:tenants-scale's readings of a running router or gateway: its /metrics, when it has gone idle, and what it
// did at rest (CPU from /proc schedstat, wake-ups, counts from /metrics around them; the arithmetic is
// tenants-scale-rest.ts).
import { parsePrometheusText, processTime, readProcess, total, voluntarySwitches, type Sample } from './process-figures.ts';
import { restActivity, type RestActivity, type RestReading } from './tenants-scale-rest.ts';

/** A process with an ops server: its pid and where its /metrics is. */
export interface Probed {
  pid: number;
  opsUrl: string;
}

/** One side of the rest window: the process's /metrics and its CPU (schedstat, ns) and wake-ups from /proc. */
async function restReading(pid: number, opsUrl: string, side: 'before' | 'after'): Promise<RestReading> {
  const scrapeIt = async () => {
    const samples = parsePrometheusText(await (await fetch(`${opsUrl}/metrics`)).text());
    return { samples, scrapedAt: performance.now() };
  };
  const readIt = () => ({ cpuMs: processTime(pid).cpuMs, wakeups: voluntarySwitches(pid), readAt: performance.now() });
  // The /proc readings sit inside the scrapes, so the CPU figure holds neither scrape's own work.
  if (side === 'before') {
    const scraped = await scrapeIt();
    return { ...scraped, ...readIt() };
  }
  const read = readIt();
  return { ...(await scrapeIt()), ...read };
}

/** Each process over `ms` at rest: CPU per wall second at ns resolution, what it did (counts), and its RSS at the end. */
export async function atRest(processes: Probed[], ms: number): Promise<Array<{ rss: number; cpuMsPerS: number; rest: RestActivity }>> {
  const before = await Promise.all(processes.map((p) => restReading(p.pid, p.opsUrl, 'before')));
  await new Promise((r) => setTimeout(r, ms));
  const after: RestReading[] = [];
  for (const p of processes) after.push(await restReading(p.pid, p.opsUrl, 'after'));
  return processes.map((p, i) => {
    const rest = restActivity(before[i]!, after[i]!);
    return { rss: readProcess(p.pid).rss, cpuMsPerS: rest.cpuMsPerS, rest };
  });
}

/**
 * Until the router has handled no informer event and sent no write for `quietMs` (at most two minutes), so the rest
 * window starts after the echoes of the creates and of the last phase (watch events still arriving, the garbage
 * collector deleting owned Secrets, first applies), not among them. Reads are left out: 2 watches per tenant renew
 * every 5-10 minutes, so at 1,000 tenants some GET is always a second away. Its scrapes cost the router CPU, before
 * the window only. Returns the ms waited.
 */
export async function untilRouterQuiet(router: Probed, quietMs = 6000): Promise<number> {
  const started = performance.now();
  const activity = async () => {
    const samples = await routerScrape(router);
    const writes = samples.filter((m) => m.name === 'rest_client_requests_total' && m.labels.method !== 'GET').reduce((sum, m) => sum + m.value, 0);
    return total(samples, 'kubeloop_router_informer_events_total') + writes;
  };
  let last = await activity();
  let since = performance.now();
  while (performance.now() - since < quietMs && performance.now() - started < 120_000) {
    await new Promise((r) => setTimeout(r, 2000));
    const now = await activity();
    if (now !== last) [last, since] = [now, performance.now()];
  }
  return performance.now() - started;
}

/** The router's /metrics; its event-loop delay (prom-client's default metrics) restarts at every scrape. */
export async function routerScrape(router: Probed): Promise<Sample[]> {
  return parsePrometheusText(await (await fetch(`${router.opsUrl}/metrics`)).text());
}
