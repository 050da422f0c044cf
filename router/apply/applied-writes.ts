// What each Loop last server-side applied per object, and the resourceVersion the API server answered: the
// same configuration applied again to the very object that apply produced changes nothing, so it is not sent.
import { createHash } from 'node:crypto';
import type { LoopConfig } from '../base/loop-spec.ts';

/** Objects remembered per Loop; the least recently applied is forgotten first. */
export const DEFAULT_APPLIED_WRITES = 10_000;

interface Applied {
  digest: string;
  resourceVersion: string;
}

export class AppliedWrites {
  readonly #capacity: number;
  readonly #byObject = new Map<string, Applied>();

  /** capacity 0 remembers nothing: every apply is sent (the behaviour before, for comparisons). */
  constructor(capacity = DEFAULT_APPLIED_WRITES) {
    this.#capacity = capacity;
  }

  /** The digest `unchanged` and `remember` compare; computed once per apply. */
  static digest(configuration: unknown): string {
    return createHash('sha256').update(JSON.stringify(configuration)).digest('base64');
  }

  /**
   * Whether applying `digest` to `objectKey` would change nothing: this Loop applied the same configuration
   * last, and the object the router holds now (`currentVersion`) is the one that apply produced. Anything
   * else (someone else's write, a delete, a different configuration, a restart) sends it.
   */
  unchanged(objectKey: string, digest: string, currentVersion: string | undefined): boolean {
    const last = this.#byObject.get(objectKey);
    return last !== undefined && currentVersion !== undefined && last.digest === digest && last.resourceVersion === currentVersion;
  }

  remember(objectKey: string, digest: string, resourceVersion: string | undefined): void {
    if (this.#capacity === 0) return;
    this.#byObject.delete(objectKey);
    if (resourceVersion === undefined) return;
    this.#byObject.set(objectKey, { digest, resourceVersion });
    if (this.#byObject.size > this.#capacity) this.#byObject.delete(this.#byObject.keys().next().value!);
  }

  get size(): number {
    return this.#byObject.size;
  }
}

/** One memory per Loop run: a new spec is a new LoopConfig, and starts with nothing remembered. */
const perLoop = new WeakMap<LoopConfig, AppliedWrites>();

export function appliedWritesOf(loop: LoopConfig): AppliedWrites {
  let writes = perLoop.get(loop);
  if (!writes) perLoop.set(loop, (writes = new AppliedWrites()));
  return writes;
}
