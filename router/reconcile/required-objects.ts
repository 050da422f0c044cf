// Objects a function asks for (`requires` in its answer): checked against the bounds, read as the Loop's
// ServiceAccount (the runner's client impersonates it), and described as targets the runner watches.
import type { KubeObject, RequiredResource } from '../../lib/contract/types.ts';
import { UnknownKindError, type ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { labelSelectorQuery } from '../../lib/kube/label-selector.ts';
import { jsonEqual } from '../../lib/kube/object-meta.ts';
import { collectionPath, kindKey, objectPath, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { RelatedTarget } from '../base/related-relation.ts';
import { byNamespaceAndName } from './related-objects.ts';
import { readConfinementProblem } from '../base/loop-confinement.ts';

/** Per reconcile: entries one answer may ask for, objects read for them, and calls made (the first plus rounds). */
export const REQUIRES_LIMITS = { entries: 8, objects: 100, calls: 4 } as const;

/** A requirement as the runner watches it for one primary. */
export interface ResolvedRequirement {
  name: string;
  /** kindKey of the kind ("Secret.v1"). */
  kind: string;
  resource: ResourceInfo;
  /** undefined: a cluster-scoped kind. */
  namespace: string | undefined;
  target: RelatedTarget;
}

/**
 * What a primary's function required in its settled answer (the one applied): the entries as it asked, and
 * as the runner watches them. Reconcile returns it; the runner keeps it and sends it back on the next call.
 */
export interface SettledRequirements {
  entries: readonly RequiredResource[];
  resolved: readonly ResolvedRequirement[];
}

/** Why a request could not be made: its requires (invalid, over their bounds, forbidden) or its size. */
export type RequiresProblem = { reason: 'RequiresInvalid' | 'RequiresExceeded' | 'Forbidden' | 'RequestTooLarge'; message: string };
export type Fetched = { ok: true; related: Record<string, KubeObject[]>; resolved: ResolvedRequirement[] } | ({ ok: false } & RequiresProblem);

/** Order-insensitive: an answer asking for the same entries as the request carried has what it needs. */
export function sameRequirements(a: readonly RequiredResource[], b: readonly RequiredResource[]): boolean {
  const sorted = (list: readonly RequiredResource[]) => [...list].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return jsonEqual(sorted(a), sorted(b));
}

/** What is wrong with an answer's requires before anything is read (pure). */
export function requiresProblem(entries: readonly RequiredResource[], declared: ReadonlySet<string>): RequiresProblem | undefined {
  if (entries.length > REQUIRES_LIMITS.entries) {
    return { reason: 'RequiresExceeded', message: `the answer requires ${entries.length} entries; at most ${REQUIRES_LIMITS.entries} per answer` };
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    if (declared.has(entry.name)) return { reason: 'RequiresInvalid', message: `requires "${entry.name}" has the name of a spec.related entry of the Loop` };
    if (seen.has(entry.name)) return { reason: 'RequiresInvalid', message: `requires "${entry.name}" is named twice` };
    seen.add(entry.name);
  }
  return undefined;
}

function describe(resource: ResourceInfo, namespace: string | undefined): string {
  const plural = resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
  return namespace ? `${plural} in namespace ${namespace}` : resource.namespaced ? `${plural} in all namespaces` : plural;
}

/**
 * Reads every entry as the Loop's ServiceAccount; the first problem (unknown kind, 403, a bound) stops it. A
 * namespaced Loop (`loopNamespace`) may require objects of its own namespace only: anything else is
 * RequiresInvalid before any read or watch.
 */
export async function fetchRequired(client: KubeClient, discovery: ResourceDiscovery, primary: KubeObject, entries: readonly RequiredResource[], loopNamespace?: string): Promise<Fetched> {
  const related: Record<string, KubeObject[]> = {};
  const resolved: ResolvedRequirement[] = [];
  let total = 0;
  for (const entry of entries) {
    let resource: ResourceInfo;
    try {
      resource = await discovery.resolve(entry.apiVersion, entry.kind);
    } catch (error) {
      if (error instanceof UnknownKindError) return { ok: false, reason: 'RequiresInvalid', message: `requires "${entry.name}": ${error.message}` };
      throw error;
    }
    const namespace = resource.namespaced ? (entry.namespace ?? primary.metadata?.namespace) : undefined;
    if (resource.namespaced && !namespace) {
      return { ok: false, reason: 'RequiresInvalid', message: `requires "${entry.name}": ${entry.kind} is namespaced and the primary is not: name a namespace` };
    }
    const outside = loopNamespace === undefined ? undefined : readConfinementProblem(loopNamespace, namespace, resource.namespaced);
    if (outside) return { ok: false, reason: 'RequiresInvalid', message: `requires "${entry.name}" (${entry.kind}): ${outside}` };
    let objects: KubeObject[];
    let target: RelatedTarget;
    try {
      if (entry.names) {
        const names = [...new Set(entry.names)].sort();
        if (total + names.length > REQUIRES_LIMITS.objects) return exceeded(entry.name);
        const found = await Promise.all(names.map((name) => client.getIfExists<KubeObject>({ path: objectPath(resource, name, namespace) })));
        objects = found.filter((o): o is KubeObject => o !== undefined);
        target = { kind: 'names', keys: names.map((n) => (namespace ? `${namespace}/${n}` : n)) };
      } else {
        const selector = entry.selector ?? {};
        const list = await client.request<{ items?: KubeObject[] }>({
          path: collectionPath(resource, namespace),
          query: { labelSelector: labelSelectorQuery(selector) ?? '', limit: String(REQUIRES_LIMITS.objects - total + 1) },
        });
        objects = (list.items ?? []).map((o) => ({ ...o, apiVersion: resource.apiVersion, kind: resource.kind }));
        target = { kind: 'selector', namespace, selector };
      }
    } catch (error) {
      if (isApiError(error, 403)) {
        return { ok: false, reason: 'Forbidden', message: `requires "${entry.name}": the Loop's ServiceAccount may not read ${describe(resource, namespace)}` };
      }
      throw error;
    }
    total += objects.length;
    if (total > REQUIRES_LIMITS.objects) return exceeded(entry.name);
    related[entry.name] = objects.map(withoutManagedFields).sort(byNamespaceAndName);
    resolved.push({ name: entry.name, kind: kindKey(resource.apiVersion, resource.kind), resource, namespace, target });
  }
  return { ok: true, related, resolved };
}

function exceeded(name: string): Fetched {
  return { ok: false, reason: 'RequiresExceeded', message: `requires "${name}": more than ${REQUIRES_LIMITS.objects} objects required in one reconcile` };
}

function withoutManagedFields(object: KubeObject): KubeObject {
  const { managedFields: _managed, ...metadata } = object.metadata ?? {};
  return { ...object, metadata };
}
