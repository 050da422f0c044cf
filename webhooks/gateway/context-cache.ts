// The informer caches the gateway reads context objects from, so functions stay credential-free: one per
// kind cluster-wide for ClusterAdmissionHooks, one per kind and namespace for a namespaced AdmissionHook (the
// gateway lists a team's namespace only, under the grant the team gives it). Caches start without blocking
// anyone: a hook whose cache has not synced is answered by its failure policy, saying why (ContextPending).
// A lookup stops adding objects once the hook's context byte bound is passed (ContextTooLarge).
import type { Logger } from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { HookContextEntry } from '../../api/admission-hook.ts';
import type { KubeObject } from '../../api/meta.ts';
import { Informer, kindKey, ResourceDiscovery, type KubeClient, type ResourceInfo } from '../../lib/kube/index.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../../lib/contract/json-depth.ts';
import { contextNamespace, contextObjectName, slimContextObject } from './context-objects.ts';

/** Default of --max-context-bytes: the context objects one request of one hook may carry (serialised). */
export const DEFAULT_MAX_CONTEXT_BYTES = 1024 * 1024;

export type ContextResult =
  | { ok: true; context: Record<string, KubeObject | null>; bytes: number }
  | { ok: false; reason: 'ContextPending' | 'ContextTooLarge'; message: string };

/** What a lookup needs of a hook: its entries, and its namespace (a namespaced hook reads its own cache). */
export interface ContextHook {
  context: HookContextEntry[];
  namespace?: string;
}

/** What the gateway's hot path needs of the cache. */
export interface ContextLookup {
  lookup(hook: ContextHook, object: KubeObject | undefined, requestNamespace: string | undefined, maxBytes: number): ContextResult;
}

/** A lookup for hooks without context (tests, benches). */
export const NO_CONTEXT: ContextLookup = { lookup: () => ({ ok: true, context: {}, bytes: 0 }) };

/** The cache an entry of `hook` reads: "<kind>|<namespace>" for a namespaced hook, "<kind>|*" for a cluster hook. */
export function contextScopeKey(entry: Pick<HookContextEntry, 'apiVersion' | 'kind'>, hookNamespace: string | undefined): string {
  return `${kindKey(entry.apiVersion, entry.kind)}|${hookNamespace ?? '*'}`;
}

interface Scope {
  informer: Informer<KubernetesObject>;
  resource: ResourceInfo;
  namespace?: string;
  /** Why the last list or watch failed before the first sync (a 403, a kind that answers no LIST). */
  error?: string;
}

export interface ContextCacheOptions {
  logger?: Logger;
  /** Tests: a ClusterAdmissionHook's caches of namespaced kinds hold this namespace only. */
  watchNamespace?: string;
  /** Context objects holding more JSON values are never cached (sent as null); reported by onRefused. */
  maxValues?: number;
  onRefused?: (kind: string, object: KubernetesObject) => void;
  /** A cache synced for the first time (hooks waiting on it are ready), or failed to with a new reason. */
  onChanged?: (key: string) => void;
}

export class ContextCache implements ContextLookup {
  readonly #scopes = new Map<string, Scope>();
  readonly #discovery: ResourceDiscovery;
  /** Serialised size of each cached object as a function receives it, by omitFields; dropped with the object. */
  readonly #sizes = new WeakMap<object, Map<string, number>>();

  constructor(
    private readonly client: KubeClient,
    private readonly options: ContextCacheOptions = {},
  ) {
    this.#discovery = new ResourceDiscovery(client);
  }

  /** The kind's resource (plural, scope) by discovery, without starting a cache for it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    return this.#discovery.resolve(apiVersion, kind);
  }

  /** Starts the cache an entry of a hook reads (if not running) and returns at once: a lookup says when it has not synced. */
  ensure(resource: ResourceInfo, hookNamespace: string | undefined): string {
    const key = contextScopeKey(resource, hookNamespace);
    if (this.#scopes.has(key)) return key;
    const namespace = resource.namespaced ? (hookNamespace ?? this.options.watchNamespace) : undefined;
    const kind = kindKey(resource.apiVersion, resource.kind);
    const informer = new Informer<KubernetesObject>({
      client: this.client,
      resource,
      ...(namespace ? { namespace } : {}),
      maxValues: this.options.maxValues ?? DEFAULT_MAX_OBJECT_VALUES,
      onRefused: (object) => this.options.onRefused?.(kind, object),
      ...(this.options.logger ? { logger: this.options.logger.child({ context: key }) } : {}),
    });
    const scope: Scope = { informer, resource, ...(namespace ? { namespace } : {}) };
    // A first sync, or a new reason it cannot sync: the hooks reading it are reported again.
    informer.on('restart', (_reason, error) => {
      if (informer.hasSynced || !error || error.message === scope.error) return;
      scope.error = error.message;
      this.options.onChanged?.(key);
    });
    informer.on('synced', () => {
      delete scope.error;
      this.options.onChanged?.(key);
    });
    this.#scopes.set(key, scope);
    informer.start();
    return key;
  }

  /** Stops the caches no served hook reads any more (a team's namespace cache goes with its last hook). */
  async retain(keys: ReadonlySet<string>): Promise<void> {
    const gone = [...this.#scopes].filter(([key]) => !keys.has(key));
    for (const [key] of gone) this.#scopes.delete(key);
    await Promise.all(gone.map(([, scope]) => scope.informer.stop()));
  }

  /** Why a hook's context cannot be served yet (a cache not synced), or undefined when every cache it reads has. */
  pending(hook: ContextHook): string | undefined {
    for (const entry of hook.context) {
      const key = contextScopeKey(entry, hook.namespace);
      const scope = this.#scopes.get(key);
      if (!scope) return `the context cache of ${kindKey(entry.apiVersion, entry.kind)} is not started`;
      if (!scope.informer.hasSynced) {
        const where = scope.namespace ? ` in namespace ${scope.namespace}` : '';
        const grant = hook.namespace ? ` (a team grants the gateway get, list and watch on ${scope.resource.plural} in its namespace: docs/tenants.md)` : ' (chart: webhook.contextRules)';
        return `the context cache of ${scope.resource.plural}${where} has not synced${scope.error ? `: ${scope.error}${grant}` : ''}`;
      }
    }
    return undefined;
  }

  /**
   * The context objects of one request, by entry name (null: named but not found, or not named at all). Objects
   * are counted as they are added; past `maxBytes` the lookup stops, so an oversized request is never built.
   */
  lookup(hook: ContextHook, object: KubeObject | undefined, requestNamespace: string | undefined, maxBytes: number): ContextResult {
    const pending = this.pending(hook);
    if (pending) return { ok: false, reason: 'ContextPending', message: pending };
    const context: Record<string, KubeObject | null> = {};
    let bytes = 0;
    for (const entry of hook.context) {
      const scope = this.#scopes.get(contextScopeKey(entry, hook.namespace))!;
      const name = contextObjectName(entry.objectName, object);
      const namespace = contextNamespace(entry, requestNamespace, scope.resource.namespaced);
      const found = name ? scope.informer.store.get(namespace ? `${namespace}/${name}` : name) : undefined;
      if (!found) {
        context[entry.name] = null;
        continue;
      }
      bytes += this.#sizeOf(found, entry.omitFields);
      if (bytes > maxBytes) {
        return { ok: false, reason: 'ContextTooLarge', message: `its context objects take more than ${maxBytes} bytes (--max-context-bytes) at entry "${entry.name}" (${kindKey(entry.apiVersion, entry.kind)} ${found.metadata?.name ?? ''}); the request was not built` };
      }
      context[entry.name] = slimContextObject(found as KubeObject, entry.omitFields);
    }
    return { ok: true, context, bytes };
  }

  #sizeOf(object: KubernetesObject, omitFields: string[] = []): number {
    const key = omitFields.join(',');
    let sizes = this.#sizes.get(object);
    if (!sizes) this.#sizes.set(object, (sizes = new Map()));
    let size = sizes.get(key);
    if (size === undefined) {
      size = Buffer.byteLength(JSON.stringify(slimContextObject(object as KubeObject, omitFields)));
      sizes.set(key, size);
    }
    return size;
  }

  async stop(): Promise<void> {
    await this.retain(new Set());
  }
}
