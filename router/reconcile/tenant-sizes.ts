// How many objects each tenant holds in the flight recorder, kept so that the largest tenant is found at once:
// a recorder past its total bound evicts on every entry, and a scan of every tenant then cost each reconcile
// O(tenants) of CPU (a thousand tenants: a fifth of the router's CPU under load, docs/performance.md).

export class TenantSizes {
  readonly #size = new Map<string, number>();
  /** Tenants by the number of objects they hold (none at 0). */
  readonly #bySize = new Map<number, Set<string>>();
  #largest = 0;

  /** Sets a tenant's count (0: it holds none). */
  set(tenant: string, size: number): void {
    const previous = this.#size.get(tenant) ?? 0;
    if (previous === size) return;
    if (previous > 0) this.#bucket(previous).delete(tenant);
    if (size > 0) {
      this.#size.set(tenant, size);
      this.#bucket(size).add(tenant);
    } else {
      this.#size.delete(tenant);
    }
    if (size > this.#largest) this.#largest = size;
    // Counts move by one object at a time in the recorder, so this steps down once at most.
    while (this.#largest > 0 && (this.#bySize.get(this.#largest)?.size ?? 0) === 0) this.#bySize.delete(this.#largest--);
  }

  /**
   * Whose object goes when all tenants together hold too many: one holding the most, `recording` (the tenant that
   * just recorded) when it is among them, so its own objects go first and a tenant under the largest share never
   * loses one. Undefined when no tenant holds any.
   */
  largest(recording: string): string | undefined {
    const largest = this.#bySize.get(this.#largest);
    if (!largest) return undefined;
    if (largest.has(recording)) return recording;
    return largest.values().next().value;
  }

  #bucket(size: number): Set<string> {
    let bucket = this.#bySize.get(size);
    if (!bucket) this.#bySize.set(size, (bucket = new Set()));
    return bucket;
  }
}
