// prom-client's Counter with a labels() child that keys its series once, not on every inc: the series stay in
// prom-client's own shape, so the registry renders and resets them as before.
import { inspect, format } from 'node:util';
import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';
import { LabelFold, type LabelFolding } from './folded-labels.ts';
import { checkLabels, LastSeriesKey, seriesKey } from './lean-histogram.ts';

type Labels = Record<string, string | number>;

/** prom-client's refusals of an increment, its messages: a NaN passes as in prom-client (`value &&`). */
function checkIncrement(value: number | undefined): void {
  if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
  if ((value as number) < 0) throw new Error('It is not possible to decrease a counter');
}

/** The fields of prom-client's Counter this class reads; they are not in its typings. */
interface Internals {
  hashMap: Record<string, { value: number; labels: Labels }>;
  labelNames: string[];
  sortedLabelNames: string[];
}

/**
 * A drop-in prom-client Counter. prom-client's child is `inc.bind(this, labels)`: every inc of a bound series
 * builds its key and validates its labels again; here the child does both once. Errors are prom-client's, thrown
 * at the same call (an unknown label at each inc, as prom-client's child does). With `folding`, those labels' values
 * are folded (folded-labels.ts) wherever a label set comes in.
 */
export class LeanCounter<L extends string = string> extends Counter<L> {
  readonly #fold: LabelFold | undefined;
  readonly #keys: LastSeriesKey;

  constructor(configuration: CounterConfiguration<L>, folding?: LabelFolding) {
    super(configuration);
    this.#fold = LabelFold.of((this as unknown as Internals).labelNames, folding);
    // prom-client's exemplar inc would write the label values as given.
    if (this.#fold && configuration.enableExemplars) throw new Error('LeanCounter folds labels without exemplars only');
    this.#keys = new LastSeriesKey(this.#fold);
    // prom-client picks inc's flavour in its constructor; the exemplar one stays prom-client's.
    if (!configuration.enableExemplars) this.inc = this.#inc as Counter<L>['inc'];
  }

  /** prom-client's incWithoutExemplar (inc(), inc(value), inc(labels, value)) with the series key of a run of one label set built once. */
  #inc = (labels?: LabelValues<L> | number, value?: number): { labelHash: string } => {
    const self = this as unknown as Internals;
    let hash = '';
    let given = labels as Labels;
    if (typeof labels === 'object' && labels !== null) {
      hash = this.#keys.of(self.sortedLabelNames, given);
      checkLabels(self.labelNames, given);
    } else {
      value = labels as number | undefined;
      given = {};
    }
    checkIncrement(value);
    const by = value ?? 1;
    const series = self.hashMap[hash];
    if (series) series.value += by;
    else self.hashMap[hash] = { value: by, labels: this.#fold ? this.#fold.labels(given) : given };
    return { labelHash: hash };
  };

  override labels(...values: string[]): Counter.Internal;
  override labels(labels: LabelValues<L>): Counter.Internal;
  override labels(...given: unknown[]): Counter.Internal {
    const args = this.#fold ? this.#fold.args(given) : given;
    // prom-client's child first: its argument handling (label object, or values with their count checked).
    const child = (super.labels as unknown as (...a: unknown[]) => Counter.Internal)(...args);
    if ((this as { enableExemplars?: boolean }).enableExemplars) return child;
    const self = this as unknown as Internals;
    const labels = (typeof args[0] === 'object' ? args[0] || {} : Object.fromEntries(self.labelNames.map((n, i) => [n, args[i]]))) as Labels;
    const key = seriesKey(self.sortedLabelNames, labels);
    const unknownLabel = Object.keys(labels).find((label) => !self.labelNames.includes(label));
    const inc = (value?: number) => {
      if (unknownLabel !== undefined) throw new Error(`Added label "${unknownLabel}" is not included in initial labelset: ${inspect(self.labelNames)}`);
      checkIncrement(value);
      const by = value ?? 1;
      const series = self.hashMap[key];
      if (series) series.value += by;
      else self.hashMap[key] = { value: by, labels };
    };
    return { inc };
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<L>): void;
  override remove(...args: unknown[]): void {
    // A value folded into "other" shares its series with every other such Loop: one Loop going leaves it.
    if (this.#fold?.shared(args)) return;
    (super.remove as unknown as (...a: unknown[]) => void)(...args);
  }
}
