// prom-client's Histogram with a cheaper observe: one series key and one bucket search per observation (per child
// for labels()), no per-call allocation, while the series stay in prom-client's own shape for the registry to render.
import { inspect, format } from 'node:util';
import { Histogram, type HistogramConfiguration, type LabelValues } from 'prom-client';
import { LabelFold, type LabelFolding } from './folded-labels.ts';

type Labels = Record<string, string | number>;

/**
 * prom-client's Exemplar (lib/exemplar.js, not exported): the same fields, made and validated the same way. Not
 * required from prom-client's file: a require at load time breaks the router's startup snapshot.
 */
class Exemplar {
  labelSet: Labels = {};
  value: number | null = null;
  timestamp?: number;

  /** OpenMetrics caps an exemplar's label names and values at 128 characters together; prom-client's message. */
  validateExemplarLabelSet(labelSet: Labels): void {
    let size = 0;
    for (const name of Object.keys(labelSet)) size += name.length + String(labelSet[name]).length;
    if (size > 128) throw new RangeError('Label set size must be smaller than 128 UTF-8 chars');
  }
}

/** One series as prom-client's Histogram keeps it in `hashMap` and renders it (lib/histogram.js createBaseValues). */
interface Series {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
  bucketExemplars?: Record<string, Exemplar | null>;
}

/** The fields of prom-client's Histogram this class reads; they are not in its typings. */
interface Internals {
  hashMap: Record<string, Series>;
  labelNames: string[];
  sortedLabelNames: string[];
  upperBounds: readonly number[];
  bucketValues: Readonly<Record<string, number>>;
  bucketExemplars?: Readonly<Record<string, Exemplar | null>>;
  defaultLabels: Labels;
  defaultExemplarLabelSet: Labels;
}

/** prom-client's series key (util.js hashObject with the sorted label names): the same string, so the same series. */
export function seriesKey(sortedLabelNames: readonly string[], labels: Labels): string {
  let key = '';
  for (const name of sortedLabelNames) {
    const value = labels[name];
    if (value !== undefined) key += `${name}:${value},`;
  }
  return key;
}

/**
 * The series key of the last label set given and its values (copied: a caller changing its object later cannot
 * fool it): a run of one label set, as a Loop's keys or one API host give, builds its key string once, and folds
 * its values (`fold`: the Loop's name or "other") once.
 */
export class LastSeriesKey {
  #values: unknown[] = [];
  #key: string | undefined;
  readonly #fold: LabelFold | undefined;

  constructor(fold?: LabelFold) {
    this.#fold = fold;
  }

  of(sortedLabelNames: readonly string[], labels: Labels): string {
    const last = this.#values;
    let same = this.#key !== undefined;
    for (let i = 0; same && i < sortedLabelNames.length; i++) same = labels[sortedLabelNames[i]!] === last[i];
    if (same) return this.#key!;
    for (let i = 0; i < sortedLabelNames.length; i++) last[i] = labels[sortedLabelNames[i]!];
    return (this.#key = seriesKey(sortedLabelNames, this.#fold ? this.#fold.labels(labels) : labels));
  }
}

/** The index of the first bound >= value (prom-client's findBound), `bounds.length` for the +Inf bucket only. */
export function bucketIndex(bounds: readonly number[], value: number): number {
  let low = 0;
  let high = bounds.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (value <= bounds[middle]!) high = middle;
    else low = middle + 1;
  }
  return low;
}

export function checkLabels(labelNames: readonly string[], labels: Labels): void {
  for (const label in labels) {
    if (!labelNames.includes(label)) throw new Error(`Added label "${label}" is not included in initial labelset: ${inspect(labelNames)}`);
  }
}

function checkValue(value: number): void {
  if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
}

/**
 * A drop-in prom-client Histogram. prom-client's observe validates the labels, allocates, builds the series key
 * and searches the buckets linearly twice (once more for an exemplar), and a labels() child does all of it on
 * every observe; here a child keys its series once, the bucket is found by bisection, and the property keys of
 * the buckets are made once. Errors (unknown label, NaN or infinite value, exemplar too long) are prom-client's.
 * With `folding`, those labels' values are folded (folded-labels.ts) wherever a label set comes in.
 */
export class LeanHistogram<L extends string = string> extends Histogram<L> {
  /** The bucket property keys as prom-client writes them (String(bound)), '-1' beyond the last: no number-to-string per observe. */
  readonly #keys: string[];
  readonly #bounds: readonly number[];
  readonly #fold: LabelFold | undefined;
  readonly #lastKey: LastSeriesKey;

  constructor(configuration: HistogramConfiguration<L>, folding?: LabelFolding) {
    super(configuration);
    const self = this as unknown as Internals;
    this.#bounds = self.upperBounds;
    this.#keys = [...self.upperBounds.map(String), '-1'];
    this.#fold = LabelFold.of(self.labelNames, folding);
    this.#lastKey = new LastSeriesKey(this.#fold);
    // prom-client picks observe's flavour in its constructor; ours keep the same two signatures.
    this.observe = (configuration.enableExemplars ? this.#observeWithExemplar : this.#observeWithoutExemplar) as Histogram<L>['observe'];
  }

  /** Observes `value` for `labels`, with an exemplar when `exemplarLabels` has any label: the exemplar flavour without its argument object. */
  observeLabelled(labels: LabelValues<L>, value: number, exemplarLabels?: Labels): void {
    const self = this as unknown as Internals;
    // Keyed first: a new Loop's name is folded, so counted towards the bound, even for a write refused below.
    const key = this.#lastKey.of(self.sortedLabelNames, labels as Labels);
    checkLabels(self.labelNames, labels as Labels);
    checkValue(value);
    this.#record(key, labels as Labels, value, exemplarLabels);
  }

  override labels(...values: string[]): Histogram.Internal<L>;
  override labels(labels: LabelValues<L>): Histogram.Internal<L>;
  override labels(...given: unknown[]): Histogram.Internal<L> {
    const args = this.#fold ? this.#fold.args(given) : given;
    // prom-client's own child first: the same argument handling, validation and errors, and its startTimer.
    const child = (super.labels as unknown as (...a: unknown[]) => Histogram.Internal<L>)(...args);
    const self = this as unknown as Internals;
    const labels = (typeof args[0] === 'object' ? args[0] : Object.fromEntries(self.labelNames.map((n, i) => [n, args[i]]))) as Labels;
    const key = seriesKey(self.sortedLabelNames, labels);
    return {
      observe: (value: number) => {
        checkValue(value);
        this.#record(key, labels, value, undefined);
      },
      startTimer: child.startTimer,
    };
  }

  override zero(labels: LabelValues<L>): void {
    super.zero(this.#fold ? this.#fold.labels(labels) : labels);
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<L>): void;
  override remove(...args: unknown[]): void {
    // A value folded into "other" shares its series with every other such Loop: one Loop going leaves it.
    if (this.#fold?.shared(args)) return;
    (super.remove as unknown as (...a: unknown[]) => void)(...args);
  }

  #observeWithoutExemplar = (labels?: LabelValues<L> | number, value?: number): void => {
    // prom-client's reading of its arguments: observe(value), observe(labels, value); a missing label set is {}.
    const given = labels === 0 ? 0 : labels || {};
    if (typeof given === 'object') this.observeLabelled(given, value as number);
    else this.observeLabelled({}, given as number);
  };

  #observeWithExemplar = ({ labels, value, exemplarLabels }: { labels?: LabelValues<L>; value?: number; exemplarLabels?: Labels } = {}): void => {
    const self = this as unknown as Internals;
    this.observeLabelled((labels ?? self.defaultLabels) as LabelValues<L>, value as number, exemplarLabels);
  };

  #record(key: string, labels: Labels, value: number, exemplarLabels: Labels | undefined): void {
    const self = this as unknown as Internals;
    let series = self.hashMap[key];
    if (!series) {
      // A child's labels are folded already; folding again changes nothing (a folded value folds to itself).
      series = { labels: this.#fold ? this.#fold.labels(labels) : labels, bucketValues: { ...self.bucketValues }, sum: 0, count: 0 };
      if (self.bucketExemplars) series.bucketExemplars = { ...self.bucketExemplars };
      self.hashMap[key] = series;
    }
    const at = bucketIndex(this.#bounds, value);
    series.sum += value;
    series.count += 1;
    if (at < this.#bounds.length) series.bucketValues[this.#keys[at]!]! += 1;
    if (exemplarLabels === undefined || exemplarLabels === self.defaultExemplarLabelSet || !series.bucketExemplars) return;
    if (Object.keys(exemplarLabels).length === 0) return;
    const slot = this.#keys[at]!;
    let exemplar = series.bucketExemplars[slot];
    if (exemplar === null || typeof exemplar !== 'object') series.bucketExemplars[slot] = exemplar = new Exemplar();
    exemplar.validateExemplarLabelSet(exemplarLabels);
    exemplar.labelSet = exemplarLabels;
    exemplar.value = value;
    exemplar.timestamp = Date.now() / 1000;
  }
}
