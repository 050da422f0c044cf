// A metric label value from an open set (tenants: namespaces) kept to a bounded number of series: the first
// `max` values seen (counting any given up front) keep their name for good, every later one is "other", so a
// counter's series never moves between its own name and "other".
export const OTHER_LABEL = 'other';

export class BoundedLabel {
  readonly #known: Set<string>;

  /** `always`: values labelled by name from the start (they count towards `max`). */
  constructor(
    private readonly max: number,
    always: readonly string[] = [],
  ) {
    this.#known = new Set(always);
  }

  of(value: string): string {
    if (this.#known.has(value)) return value;
    if (this.#known.size >= this.max) return OTHER_LABEL;
    this.#known.add(value);
    return value;
  }
}
