// The /metrics text, rendered one metric family per event-loop turn: prom-client's registry.metrics() formats every
// family in one task (about 15,000 samples, tens of ms, at 1,000 Loops), and every watch event and function reply
// that arrived meanwhile waited behind the scrape.
import { Registry } from 'prom-client';

/** prom-client's formatter of one family (public in its JavaScript, not in its types; the test holds it to metrics()). */
interface FamilyFormatter {
  getMetricsAsString(metric: unknown): Promise<string>;
}

/** One turn of the event loop: I/O that arrived meanwhile is handled before the next family is formatted. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The same text as `registry.metrics()`, in both its formats, with a turn of the event loop between families. */
export async function renderMetrics(registry: Registry | Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>): Promise<string> {
  const openMetrics = registry.contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  const families: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    // As registry.metrics() does: the OpenMetrics format names a counter without `_total` and adds it to each sample.
    if (openMetrics && (metric as unknown as { type: string }).type === 'counter') metric.name = metric.name.replace(/_total$/, '');
    families.push(await (registry as unknown as FamilyFormatter).getMetricsAsString(metric));
    await nextTurn();
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}
