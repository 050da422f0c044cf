// The /metrics text, rendered one metric family per event-loop turn: prom-client's registry.metrics() formats every
// family in one task (about 15,000 samples, tens of ms, at 1,000 Loops), and every watch event and function reply
// that arrived meanwhile waited behind the scrape.
import { Registry } from 'prom-client';

/** prom-client's formatter of one family (public in its JavaScript, not in its types; the test holds it to metrics()). */
interface FamilyFormatter {
  getMetricsAsString(metric: unknown): Promise<string>;
}

/** A metric as the formatter reads it: its get() (prom-client's types leave it out of a registry's metric objects). */
interface Readable {
  get(): Promise<{ name: string }> | { name: string };
}

/** A counter as the formatter reads it, its family named without `_total`; the metric is left as it is. */
function withoutTotal(metric: Readable): Readable {
  return {
    get: async () => {
      const family = await metric.get();
      return { ...family, name: family.name.replace(/_total$/, '') };
    },
  };
}

/** One turn of the event loop: I/O that arrived meanwhile is handled before the next family is formatted. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The same text as `registry.metrics()`, in both its formats, with a turn of the event loop between families. */
export async function renderMetrics(registry: Registry | Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>): Promise<string> {
  const openMetrics = registry.contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  const families: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    // The OpenMetrics format names a counter's family without `_total` and adds it to each sample. registry.metrics()
    // renames the metric object itself, which the Prometheus-format registry shares (openMetricsView): its text then
    // lost `_total` after the first OpenMetrics scrape. Only the copy being formatted is renamed here.
    const family = openMetrics && (metric as unknown as { type: string }).type === 'counter' ? withoutTotal(metric as unknown as Readable) : metric;
    families.push(await (registry as unknown as FamilyFormatter).getMetricsAsString(family));
    await nextTurn();
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}
