// Follows a Loop's spec.function.ref: watches the referenced Service or Knative Service through the shared
// informers and reports every change of the URL it resolves to (or why it does not resolve).
import type { InformerLease, InformerSource } from './informer-registry.ts';
import { resolveFunctionRef, type FunctionRefConfig, type RefResolution } from '../base/function-ref.ts';
import type { FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';

export class FunctionRefWatch {
  #lease: InformerLease | undefined;
  #off: Array<() => void> = [];
  #last: RefResolution | undefined;

  constructor(
    readonly ref: FunctionRefConfig,
    private readonly policy: FunctionUrlPolicy,
    private readonly onChange: (resolution: RefResolution) => void,
  ) {}

  /** The latest resolution; undefined until the watch has listed the namespace. */
  get resolution(): RefResolution | undefined {
    return this.#last;
  }

  /** Acquires the watch (full objects: a Knative Service's URL is in its status); `synced` waits for its list. */
  async start(registry: InformerSource): Promise<void> {
    this.#lease = await registry.acquire({ apiVersion: this.ref.apiVersion, kind: this.ref.kind }, false, new Set([this.ref.namespace]));
    const informer = this.#lease.informer;
    const ifOurs = (object: { metadata?: { namespace?: string; name?: string } }) => {
      if (object.metadata?.namespace === this.ref.namespace && object.metadata?.name === this.ref.name && informer.hasSynced) this.#check();
    };
    this.#off.push(informer.on('add', ifOurs), informer.on('update', ifOurs), informer.on('delete', ifOurs));
  }

  /** Resolves once the namespace is listed, after reporting the first resolution. */
  async synced(): Promise<void> {
    await this.#lease?.informer.waitForSync();
    this.#check();
  }

  #check(): void {
    const informer = this.#lease?.informer;
    if (!informer) return;
    const next = resolveFunctionRef(this.ref, informer.store.get(`${this.ref.namespace}/${this.ref.name}`), this.policy);
    if (this.#last && JSON.stringify(this.#last) === JSON.stringify(next)) return;
    this.#last = next;
    this.onChange(next);
  }

  async stop(): Promise<void> {
    for (const off of this.#off.splice(0)) off();
    const lease = this.#lease;
    this.#lease = undefined;
    await lease?.release();
  }
}
