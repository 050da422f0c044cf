// Reads the Prometheus text exposition format (what the router serves on /metrics) into samples, for the
// live status of `kubeloop dev`. Only what that needs: names, labels, values; no exemplars or timestamps.

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

export function parsePrometheusText(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[3] ?? '').matchAll(LABEL)) labels[key as string] = unescape(value as string);
    const value = match[4] === '+Inf' ? Infinity : match[4] === '-Inf' ? -Infinity : Number(match[4]);
    if (!Number.isNaN(value)) samples.push({ name: match[1] as string, labels, value });
  }
  return samples;
}

/** Sum of the samples of one metric per value of one label (e.g. per loop). */
export function sumBy(samples: MetricSample[], name: string, label: string, where: (labels: Record<string, string>) => boolean = () => true): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || !where(s.labels)) continue;
    const key = s.labels[label] ?? '';
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** Cumulative histogram buckets of one metric for one label value, summed over the other labels: [le, count]. */
export function bucketsOf(samples: MetricSample[], name: string, label: string, value: string): Array<[number, number]> {
  const byLe = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || s.labels[label] !== value) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]);
}

/**
 * A quantile from the difference of two cumulative bucket snapshots (the calls between two polls), as the
 * upper bound of the bucket holding it: coarse, but honest about the histogram's resolution.
 */
export function quantileOfDelta(before: Array<[number, number]>, after: Array<[number, number]>, q: number): number | undefined {
  const previous = new Map(before);
  const delta = after.map(([le, count]): [number, number] => [le, count - (previous.get(le) ?? 0)]);
  const total = delta.at(-1)?.[1] ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  for (const [le, count] of delta) if (count >= rank) return le;
  return undefined;
}
