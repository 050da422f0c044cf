// Context objects of an admission: which object an AdmissionHook's context entry names for the object
// being admitted (pure), and the cache the gateway reads them from, so functions stay credential-free.
import type { Logger } from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ContextName, HookContextEntry } from '../api/admission-hook.ts';
import type { KubeObject } from '../api/meta.ts';
import { Informer, kindKey, ResourceDiscovery, type KubeClient, type ResourceInfo } from '../lib/kube/index.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import { isObjectName } from './hook-spec.ts';

/** Reads a dotted path such as spec.serviceAccountName; only string values name objects. */
function fieldAt(object: unknown, path: string): string | undefined {
  let value: unknown = object;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'string' ? value : undefined;
}

/**
 * The name a context entry gives for `object`, or undefined when the object names none or something that is
 * not an object name: "kube-system/x" in an annotation must not pick an object of another namespace.
 */
export function contextObjectName(source: ContextName, object: KubeObject | undefined): string | undefined {
  const metadata = object?.metadata;
  const name =
    source.value ?? (source.annotation ? metadata?.annotations?.[source.annotation] : source.label ? metadata?.labels?.[source.label] : source.fieldPath ? fieldAt(object, source.fieldPath) : undefined);
  const trimmed = typeof name === 'string' ? name.trim() : undefined;
  return trimmed && isObjectName(trimmed) ? trimmed : undefined;
}

/** "Same" (or no namespace) means the admitted object's; cluster-scoped kinds have none. */
export function contextNamespace(entry: HookContextEntry, requestNamespace: string | undefined, namespaced: boolean): string | undefined {
  if (!namespaced) return undefined;
  return !entry.namespace || entry.namespace === 'Same' ? requestNamespace : entry.namespace;
}

/** What functions receive: no managedFields, and none of the spec fields the hook asked to omit. */
export function slimContextObject(object: KubeObject, omitFields: string[] = []): KubeObject {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {};
  const out: KubeObject = { ...object, metadata };
  const spec = object.spec;
  if (omitFields.length > 0 && typeof spec === 'object' && spec !== null) {
    const kept = { ...(spec as Record<string, unknown>) };
    for (const field of omitFields) delete kept[field];
    out.spec = kept;
  }
  return out;
}

/** What the gateway's hot path needs of the cache. */
export interface ContextLookup {
  lookup(entries: HookContextEntry[], object: KubeObject | undefined, requestNamespace: string | undefined): Record<string, KubeObject | null>;
}

interface CachedKind {
  informer: Informer<KubernetesObject>;
  namespaced: boolean;
  resource: ResourceInfo;
}

/**
 * One informer per context kind, started when a hook first names the kind; ensure() resolves once the
 * kind's cache has synced (a hook is registered only then, so a lookup never misses for want of a list).
 */
export class ContextCache implements ContextLookup {
  readonly #kinds = new Map<string, Promise<CachedKind>>();
  readonly #ready = new Map<string, CachedKind>();
  readonly #discovery: ResourceDiscovery;

  constructor(
    private readonly client: KubeClient,
    private readonly logger?: Logger,
    /** Tests: cache one namespace only. */
    private readonly namespace?: string,
    /** Context objects holding more JSON values are never cached (sent as null); reported by onRefused. */
    private readonly budget: { maxValues: number; onRefused?: (kind: string, object: KubernetesObject) => void } = { maxValues: DEFAULT_MAX_OBJECT_VALUES },
  ) {
    this.#discovery = new ResourceDiscovery(client);
  }

  /** The kind's resource (plural, scope) by discovery, without starting a cache for it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    return this.#discovery.resolve(apiVersion, kind);
  }

  ensure(apiVersion: string, kind: string, syncTimeoutMs = 30_000): Promise<CachedKind> {
    const key = kindKey(apiVersion, kind);
    let pending = this.#kinds.get(key);
    if (!pending) {
      pending = this.#start(apiVersion, kind, key, syncTimeoutMs);
      this.#kinds.set(key, pending);
      // A failure (unknown kind, forbidden) is retried when the hook is next reconciled.
      pending.catch(() => this.#kinds.delete(key));
    }
    return pending;
  }

  async #start(apiVersion: string, kind: string, key: string, syncTimeoutMs: number): Promise<CachedKind> {
    const resource = await this.#discovery.resolve(apiVersion, kind);
    const informer = new Informer<KubernetesObject>({
      client: this.client,
      resource,
      ...(this.namespace && resource.namespaced ? { namespace: this.namespace } : {}),
      maxValues: this.budget.maxValues,
      onRefused: (object) => this.budget.onRefused?.(key, object),
      ...(this.logger ? { logger: this.logger.child({ context: key }) } : {}),
    }).start();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        informer.waitForSync(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the cache of ${key} did not sync within ${syncTimeoutMs / 1000}s (can the gateway list and watch ${resource.plural}?)`)), syncTimeoutMs);
        }),
      ]);
    } catch (error) {
      await informer.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const cached = { informer, namespaced: resource.namespaced, resource };
    this.#ready.set(key, cached);
    return cached;
  }

  /** The context objects of one request, by entry name (null: named but not found, or not named at all). */
  lookup(entries: HookContextEntry[], object: KubeObject | undefined, requestNamespace: string | undefined): Record<string, KubeObject | null> {
    const context: Record<string, KubeObject | null> = {};
    for (const entry of entries) {
      const cached = this.#ready.get(kindKey(entry.apiVersion, entry.kind));
      const name = contextObjectName(entry.objectName, object);
      const namespace = cached ? contextNamespace(entry, requestNamespace, cached.namespaced) : undefined;
      const found = cached && name ? cached.informer.store.get(namespace ? `${namespace}/${name}` : name) : undefined;
      context[entry.name] = found ? slimContextObject(found as KubeObject, entry.omitFields) : null;
    }
    return context;
  }

  async stop(): Promise<void> {
    const kinds = await Promise.allSettled(this.#kinds.values());
    await Promise.all(kinds.map((k) => (k.status === 'fulfilled' ? k.value.informer.stop() : undefined)));
  }
}
