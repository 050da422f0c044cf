// The /metrics page, rendered one metric family per event-loop turn and handed out in chunks as it is rendered:
// prom-client's registry.metrics() formats every family in one task (about 15,000 samples, tens of ms, at 1,000
// Loops) into one string of megabytes. Each series' label text is formatted once, not at every scrape.
import { Histogram, Registry } from 'prom-client';

type Labels = Record<string, string | number>;

/** One sample of a family, as prom-client's get() and getForPromString() give it. */
interface FamilyValue {
  metricName?: string;
  labels?: Labels;
  sharedLabels?: Labels;
  value: number;
  exemplar?: { labelSet: Labels; value: number; timestamp: number } | null;
}

interface Family {
  name: string;
  help: string;
  type: string;
  values?: FamilyValue[];
}

/** A metric as the formatter reads it: getForPromString() where it has one (histograms), get() otherwise. */
interface Readable {
  get(): Promise<Family> | Family;
  getForPromString?(): Promise<Family> | Family;
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

// prom-client 15's escaping and number text (lib/registry.js, lib/util.js), so the text is the same byte for byte.
const escapeString = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabelValue = (value: string | number) => (typeof value === 'string' ? escapeString(value).replace(/"/g, '\\"') : value);
function valueText(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf';
  return `${value}`;
}

function formatLabels(labels: Labels, exclude?: Labels): string[] {
  const formatted: string[] = [];
  for (const [name, value] of Object.entries(labels)) {
    if (!exclude || !Object.prototype.hasOwnProperty.call(exclude, name)) formatted.push(`${name}="${escapeLabelValue(value)}"`);
  }
  return formatted;
}

/** `{a="x",b="y"}` (or nothing) as prom-client writes a sample's labels: its own, the registry's defaults, the shared ones. */
function labelsText(labels: Labels, sharedLabels: Labels, defaultLabels: Labels | undefined): string {
  const merged = defaultLabels ? { ...labels, ...defaultLabels, ...labels } : labels;
  const parts = [...formatLabels(merged, sharedLabels), kept(sharedTexts, sharedLabels, undefined, () => formatLabels(sharedLabels).join(','))].filter(Boolean);
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

interface KeptText {
  defaultLabels: Labels | undefined;
  /** The label values the text was made from, in the object's key order: a labels object changed in place is formatted again. */
  values: Array<string | number>;
  text: string;
}

/**
 * Label texts kept with the labels object they were made from. Gauges and counters hand the same object out at every
 * scrape for as long as the series lives, and a histogram its series' labels as each sample's shared labels; at 1,000
 * Loops formatting ~15,000 of them again (an escape and two strings per label) was most of a scrape's CPU
 * (bench/metrics-scrape.bench.ts). Checked against the object's values each time.
 */
const seriesTexts = new WeakMap<Labels, KeptText>();
const sharedTexts = new WeakMap<Labels, KeptText>();

function kept(texts: WeakMap<Labels, KeptText>, labels: Labels, defaultLabels: Labels | undefined, format: () => string): string {
  const known = texts.get(labels);
  if (known && known.defaultLabels === defaultLabels && sameValues(labels, known.values)) return known.text;
  const text = format();
  texts.set(labels, { defaultLabels, values: Object.values(labels), text });
  return text;
}

/** A sample without shared labels: one object for all, so it is kept once. */
const NONE: Labels = Object.freeze({});

const seriesLabelsText = (labels: Labels, defaultLabels: Labels | undefined) => kept(seriesTexts, labels, defaultLabels, () => labelsText(labels, NONE, defaultLabels));

function sameValues(labels: Labels, values: Array<string | number>): boolean {
  let i = 0;
  for (const name in labels) {
    if (labels[name] !== values[i]) return false;
    i += 1;
  }
  return i === values.length;
}

/** A sample's exemplar as the OpenMetrics text carries it (` # {labels} value timestamp`); nothing in the Prometheus text. */
function exemplarText(exemplar: FamilyValue['exemplar'] | undefined, openMetrics: boolean): string {
  return exemplar && openMetrics ? ` # {${formatLabels(exemplar.labelSet).join(',')}} ${valueText(exemplar.value)} ${exemplar.timestamp}` : '';
}

/** A histogram's series as prom-client keeps them (lib/histogram.js createBaseValues); `-1` is the +Inf bucket. */
interface HistogramSeries {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
  bucketExemplars?: Record<string, FamilyValue['exemplar']>;
}

/** The fields of prom-client's Histogram its getForPromString() reads; they are not in its typings. */
interface HistogramInternals {
  name: string;
  help: string;
  type: string;
  hashMap: Record<string, HistogramSeries>;
  upperBounds: readonly number[];
  collect?: () => unknown;
}

/** A histogram whose samples prom-client would build with its own getForPromString(), which histogramLines() writes instead. */
function plainHistogram(metric: unknown): HistogramInternals | undefined {
  const candidate = metric as Partial<HistogramInternals> & { getForPromString?: unknown };
  return metric instanceof Histogram && candidate.getForPromString === (Histogram.prototype as unknown as { getForPromString: unknown }).getForPromString && candidate.hashMap && Array.isArray(candidate.upperBounds) ? (metric as unknown as HistogramInternals) : undefined;
}

/**
 * A histogram's text as getMetricsAsString() writes it from getForPromString(), without the sample objects: that
 * builds a `{ le }` object, a sample and a merged label set per bucket of every series before the first line is
 * written, and with ~100 Loops' series a family's samples outlived the young generation's scavenges, so each
 * scrape left megabytes in the old generation for a mark-compact to collect (bench/metrics-scrape.bench.ts).
 */
function* histogramLines(histogram: HistogramInternals, openMetrics: boolean, defaultLabels: Labels | undefined): Generator<string> {
  const name = escapeString(histogram.name);
  yield `# HELP ${name} ${escapeString(histogram.help)}`;
  yield `# TYPE ${name} ${histogram.type}`;
  const bounds = histogram.upperBounds;
  for (const series of Object.values(histogram.hashMap)) {
    // A sample's labels are its own ({ le } or none) and the registry's defaults, less the names its series carries,
    // then the series' labels: prom-client's order.
    const shared = kept(sharedTexts, series.labels, undefined, () => formatLabels(series.labels).join(','));
    const rest = [defaultLabels ? formatLabels(defaultLabels, series.labels).join(',') : '', shared].filter(Boolean).join(',');
    const after = rest ? `,${rest}}` : '}';
    let cumulative = 0;
    for (const bound of bounds) {
      cumulative += series.bucketValues[bound]!;
      yield `${name}_bucket{le="${bound}"${after} ${valueText(cumulative)}${exemplarText(series.bucketExemplars?.[bound], openMetrics)}`;
    }
    yield `${name}_bucket{le="+Inf"${after} ${valueText(series.count)}${exemplarText(series.bucketExemplars?.['-1'], openMetrics)}`;
    const own = rest ? `{${rest}}` : '';
    yield `${name}_sum${own} ${valueText(series.sum)}`;
    yield `${name}_count${own} ${valueText(series.count)}`;
  }
}

/** One family's lines as prom-client's registry.getMetricsAsString() writes them. */
async function familyLines(metric: Readable, openMetrics: boolean, defaultLabels: Labels | undefined): Promise<Iterable<string>> {
  const histogram = plainHistogram(metric);
  if (histogram) {
    if (histogram.collect) await histogram.collect();
    return histogramLines(histogram, openMetrics, defaultLabels);
  }
  const family = typeof metric.getForPromString === 'function' ? await metric.getForPromString() : await metric.get();
  return sampleLines(family, openMetrics, defaultLabels);
}

function* sampleLines(family: Family, openMetrics: boolean, defaultLabels: Labels | undefined): Generator<string> {
  const name = escapeString(family.name);
  yield `# HELP ${name} ${escapeString(family.help)}`;
  yield `# TYPE ${name} ${family.type}`;
  const counterInOpenMetrics = openMetrics && family.type === 'counter';
  for (const sample of family.values ?? []) {
    const metricName = counterInOpenMetrics ? `${sample.metricName ?? name}_total` : (sample.metricName ?? name);
    const labels = sample.labels ?? {};
    // Samples with shared labels (a histogram another class renders) come with fresh objects each scrape: not kept.
    const text = sample.sharedLabels ? labelsText(labels, sample.sharedLabels, defaultLabels) : seriesLabelsText(labels, defaultLabels);
    yield `${metricName}${text} ${valueText(sample.value)}${exemplarText(sample.exemplar, openMetrics)}`;
  }
}

/** One turn of the event loop: I/O that arrived meanwhile is handled before the next family is formatted. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Characters per chunk: well under V8's largest regular object (128 KiB), so no chunk is a large object. At 1,000
 * Loops the families' texts and the joined page were megabytes of large-object strings held until the page was
 * sent, which outlived the scavenges of the scrape: each scrape left 3-5 MB for a mark-compact to collect
 * (bench/metrics-scrape.bench.ts). Written to the socket as it comes, a chunk dies young.
 */
const CHUNK_CHARS = 16 * 1024;

/**
 * The same text as `registry.metrics()`, in both its formats, in chunks of whole lines, with a turn of the event
 * loop between families: a consumer writes each chunk out before the next is rendered.
 */
export async function* metricsChunks(registry: Registry | Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>): AsyncGenerator<string, void, undefined> {
  const openMetrics = registry.contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  // prom-client keeps them in a field of its own (setDefaultLabels); merged into every sample's labels as it does.
  const defaults = (registry as unknown as { _defaultLabels?: Labels })._defaultLabels;
  const defaultLabels = defaults && Object.keys(defaults).length > 0 ? defaults : undefined;
  const metrics = registry.getMetricsAsArray();
  // prom-client joins the families with a blank line (Prometheus) or none (OpenMetrics), then ends the page with a
  // newline, or "\n# EOF\n": the page of no family at all is that ending alone.
  let chunk = metrics.length === 0 ? '\n' : '';
  for (const [index, metric] of metrics.entries()) {
    // The OpenMetrics format names a counter's family without `_total` and adds it to each sample. registry.metrics()
    // renames the metric object itself, which the Prometheus-format registry shares (openMetricsView): its text then
    // lost `_total` after the first OpenMetrics scrape. Only the copy being formatted is renamed here.
    const readable = metric as unknown as Readable;
    const family = openMetrics && (metric as unknown as { type: string }).type === 'counter' ? withoutTotal(readable) : readable;
    if (index > 0 && !openMetrics) chunk += '\n';
    for (const line of await familyLines(family, openMetrics, defaultLabels)) {
      chunk += `${line}\n`;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    await nextTurn();
  }
  yield openMetrics ? `${chunk}# EOF\n` : chunk;
}

/** The page with its first chunk rendered: a registry that cannot be read fails here, before a status is sent. */
export async function firstChunkRendered(chunks: AsyncGenerator<string, void, undefined>): Promise<AsyncIterable<string>> {
  const first = await chunks.next();
  return (async function* () {
    if (!first.done) yield first.value;
    yield* chunks;
  })();
}
