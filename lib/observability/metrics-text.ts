// The /metrics text, rendered one metric family per event-loop turn: prom-client's registry.metrics() formats every
// family in one task (about 15,000 samples, tens of ms, at 1,000 Loops), and every watch event and function reply
// that arrived meanwhile waited behind the scrape. Each series' label text is formatted once, not at every scrape.
import { Registry } from 'prom-client';

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

/** One family's text as prom-client's registry.getMetricsAsString() writes it. */
async function familyText(metric: Readable, openMetrics: boolean, defaultLabels: Labels | undefined): Promise<string> {
  const family = typeof metric.getForPromString === 'function' ? await metric.getForPromString() : await metric.get();
  const name = escapeString(family.name);
  const lines = [`# HELP ${name} ${escapeString(family.help)}`, `# TYPE ${name} ${family.type}`];
  const counterInOpenMetrics = openMetrics && family.type === 'counter';
  for (const sample of family.values ?? []) {
    const metricName = counterInOpenMetrics ? `${sample.metricName ?? name}_total` : (sample.metricName ?? name);
    const labels = sample.labels ?? {};
    // Histogram buckets come as a fresh { le } each scrape with the series' labels shared: not worth keeping.
    const text = sample.sharedLabels ? labelsText(labels, sample.sharedLabels, defaultLabels) : seriesLabelsText(labels, defaultLabels);
    let line = `${metricName}${text} ${valueText(sample.value)}`;
    if (sample.exemplar && openMetrics) line += ` # {${formatLabels(sample.exemplar.labelSet).join(',')}} ${valueText(sample.exemplar.value)} ${sample.exemplar.timestamp}`;
    lines.push(line);
  }
  return lines.join('\n');
}

/** One turn of the event loop: I/O that arrived meanwhile is handled before the next family is formatted. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The same text as `registry.metrics()`, in both its formats, with a turn of the event loop between families. */
export async function renderMetrics(registry: Registry | Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>): Promise<string> {
  const openMetrics = registry.contentType === Registry.OPENMETRICS_CONTENT_TYPE;
  // prom-client keeps them in a field of its own (setDefaultLabels); merged into every sample's labels as it does.
  const defaults = (registry as unknown as { _defaultLabels?: Labels })._defaultLabels;
  const defaultLabels = defaults && Object.keys(defaults).length > 0 ? defaults : undefined;
  const families: string[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    // The OpenMetrics format names a counter's family without `_total` and adds it to each sample. registry.metrics()
    // renames the metric object itself, which the Prometheus-format registry shares (openMetricsView): its text then
    // lost `_total` after the first OpenMetrics scrape. Only the copy being formatted is renamed here.
    const readable = metric as unknown as Readable;
    const family = openMetrics && (metric as unknown as { type: string }).type === 'counter' ? withoutTotal(readable) : readable;
    families.push(await familyText(family, openMetrics, defaultLabels));
    await nextTurn();
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}
