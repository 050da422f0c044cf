// A metric label value from an open set (tenants: namespaces) kept to a bounded number of series: the first
// `max` values seen keep their name, every later one is reported as "other".
export const OTHER_LABEL = 'other';

export class BoundedLabel {
  readonly #known = new Set<string>();

  constructor(private readonly max: number) {}

  of(value: string): string {
    if (this.#known.has(value)) return value;
    if (this.#known.size >= this.max) return OTHER_LABEL;
    this.#known.add(value);
    return value;
  }
}
