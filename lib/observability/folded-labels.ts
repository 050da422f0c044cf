// Label values from an open set (Loops) folded into a bounded one before they reach a metric's series: a
// BoundedLabel keeps the first N by name and names every later one "other". The lean metric classes fold where they
// build a series key (once per child, once per run of one label set), so a write of a known label set pays nothing.
import { type BoundedLabel, OTHER_LABEL } from './bounded-label.ts';

type Labels = Record<string, string | number>;

/** Which labels of a metric go through which bound (the router: `loop`, `controller` and `name` through its Loops'). */
export interface LabelFolding {
  readonly labels: readonly string[];
  readonly into: BoundedLabel;
}

/**
 * The folding of one metric's labels. A BoundedLabel never changes its answer for a value (a name is kept for good;
 * once full it stays full), so a series key built from folded values stays right for the same values: nothing needs
 * folding again when membership grows.
 */
export class LabelFold {
  /** The folded labels the metric has, with their place among its label names (for labels('a', 'b')). */
  readonly #folded: ReadonlyArray<{ name: string; position: number }>;
  readonly #into: BoundedLabel;

  private constructor(folded: ReadonlyArray<{ name: string; position: number }>, into: BoundedLabel) {
    this.#folded = folded;
    this.#into = into;
  }

  /** The fold for a metric with `labelNames`; undefined when it has none of the folded labels. */
  static of(labelNames: readonly string[], folding: LabelFolding | undefined): LabelFold | undefined {
    const folded = labelNames.flatMap((name, position) => (folding?.labels.includes(name) ? [{ name, position }] : []));
    return folded.length > 0 ? new LabelFold(folded, folding!.into) : undefined;
  }

  /** `labels` with its folded values; the same object when no value changes (a Loop within the bound). */
  labels<T extends object>(labels: T): T {
    let out: Labels | undefined;
    for (const { name } of this.#folded) {
      const value = (labels as Labels)[name];
      if (value === undefined) continue;
      const folded = this.#into.of(String(value));
      if (folded === value) continue;
      out ??= { ...(labels as Labels) };
      out[name] = folded;
    }
    return (out ?? labels) as T;
  }

  /** The arguments of labels() or remove() folded: a label object, or values in the label names' order. */
  args(args: unknown[]): unknown[] {
    if (typeof args[0] === 'object') return args[0] === null ? args : [this.labels(args[0]), ...args.slice(1)];
    const out = [...args];
    for (const { position } of this.#folded) if (out[position] !== undefined) out[position] = this.#into.of(String(out[position]));
    return out;
  }

  /** Whether remove()'s arguments name a value folded into "other": that series outlives any one Loop. */
  shared(args: unknown[]): boolean {
    const byName = typeof args[0] === 'object' && args[0] !== null;
    return this.#folded.some(({ name, position }) => {
      const value = byName ? (args[0] as Labels)[name] : args[position];
      return value !== undefined && this.#into.of(String(value)) === OTHER_LABEL;
    });
  }
}
