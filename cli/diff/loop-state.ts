// Reads what the router would see for a Loop, as the Loop's ServiceAccount: the Loop itself, its primaries
// (per namespace, selector, metadata-only as configured), its children indexed by controller uid, and the
// objects of each spec.related entry where that entry looks, as the router's related informers hold them.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Loop, ServiceAccountRef } from '../../api/loop.ts';
import type { KindRef } from '../../api/meta.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { ResourceDiscovery, UnknownKindError } from '../../lib/kube/discovery.ts';
import { isApiError, serviceAccountUser, type KubeClient } from '../../lib/kube/kube-client.ts';
import { labelSelectorQuery } from '../../lib/kube/label-selector.ts';
import { listAll } from '../../lib/kube/list-all.ts';
import { METADATA_JSON_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { objectPath } from '../../lib/kube/resource-paths.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf, NAMESPACE_INDEX, namespaceOf, ObjectStore } from '../../lib/kube/object-store.ts';
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';
import type { OwnedStore } from '../../lib/reconcile/build-request.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, parseLoop, type LoopConfig, selectsPrimary, relationWatchScope, type RelatedStore, readSigningKeys, SigningSecretError } from '../../router/index.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { identityOf, kindName, kubectlGet, scopedPath, type ScopedName } from '../scoped-names.ts';

/** Why a diff cannot be computed at all (exit code 2): the message says what to fix. */
export class DiffError extends Error {
  override name = 'DiffError';
}

export interface LoopState {
  config: LoopConfig;
  /** The client acting as the Loop's ServiceAccount (Impersonate-User), as the router does. */
  client: KubeClient;
  discovery: ResourceDiscovery;
  primaries: KubeObject[];
  owned: OwnedStore[];
  /** One store per spec.related entry, read from by the router's relatedObjectsOf for request.related. */
  related: RelatedStore[];
  /** spec.function.signingSecretRef's keys, read as the ServiceAccount as the router reads them. */
  signingKey: SigningKeys | undefined;
}

/** Reads the Loop (-n) or ClusterLoop with the caller's own credentials; the rest is read as its ServiceAccount. */
export async function readLoop(admin: KubeClient, ref: ScopedName): Promise<LoopConfig> {
  const name = `${kindName(ref)} ${identityOf(ref)}`;
  let loop: Loop | undefined;
  try {
    loop = await admin.getIfExists<Loop>({ path: scopedPath(ref) });
  } catch (error) {
    if (isApiError(error)) throw new DiffError(`cannot read ${name}: ${error.message}`);
    throw error;
  }
  if (!loop) throw new DiffError(`${name} not found (${kubectlGet(ref)})`);
  try {
    // The URL policy is the router's business; diff only reads the URL (loopback included, for kubeloop dev).
    return parseLoop(loop, { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true });
  } catch (error) {
    if (error instanceof LoopSpecError) throw new DiffError(error.message);
    throw error;
  }
}

/** "Loop team-a/web" or "ClusterLoop web": the Loop in messages, by kind and identity. */
export function loopTitle(config: Pick<LoopConfig, 'name' | 'namespace'>): string {
  return `${kindName({ kind: 'loop', namespace: config.namespace })} ${identityOf(config)}`;
}

/** The API server refused to let the caller act as the ServiceAccount at all (no `impersonate` right). */
function impersonationRefused(error: unknown, { namespace, name }: ServiceAccountRef): DiffError | undefined {
  if (!isApiError(error, 403) || !/impersonate/i.test(error.message)) return undefined;
  return new DiffError(
    `forbidden: you may not impersonate the Loop's ServiceAccount ${namespace}/${name}, which diff reads as (kubectl auth can-i impersonate serviceaccounts/${name} -n ${namespace}): ${error.message}`,
  );
}

/** Where and how one kind is listed: the namespaces (undefined: all), the Loop's selector, metadata only. */
interface ListScope {
  namespaces: ReadonlySet<string> | undefined;
  selector: boolean;
  metadataOnly: boolean;
}

async function listAs(client: KubeClient, discovery: ResourceDiscovery, config: LoopConfig, ref: KindRef, scope: ListScope): Promise<{ items: KubeObject[]; namespaced: boolean }> {
  const who = `ServiceAccount ${config.serviceAccount.namespace}/${config.serviceAccount.name}`;
  let resource;
  try {
    resource = await discovery.resolve(ref.apiVersion, ref.kind);
  } catch (error) {
    if (error instanceof UnknownKindError) throw new DiffError(`${loopTitle(config)}: ${error.message}`);
    throw impersonationRefused(error, config.serviceAccount) ?? error;
  }
  const namespaces = resource.namespaced && scope.namespaces ? [...scope.namespaces].sort() : [undefined];
  const out: KubeObject[] = [];
  for (const namespace of namespaces) {
    try {
      const { items } = await listAll<KubernetesObject>(client, {
        resource,
        namespace,
        metadataOnly: scope.metadataOnly,
        labelSelector: scope.selector ? labelSelectorQuery(config.selector) : undefined,
      });
      out.push(...(items as KubeObject[]));
    } catch (error) {
      const refused = impersonationRefused(error, config.serviceAccount);
      if (refused) throw refused;
      if (isApiError(error, 403)) {
        throw new DiffError(`forbidden: the Loop's ${who} may not list ${resource.plural}${resource.group ? `.${resource.group}` : ''} ${namespace ? `in namespace ${namespace}` : 'cluster-wide'}, so the router cannot run this Loop either (grant it list and watch)`);
      }
      if (isApiError(error)) throw new DiffError(`listing ${resource.plural} as ${who}: ${error.message}`);
      throw error;
    }
  }
  return { items: out, namespaced: resource.namespaced };
}

/** Everything one diff run reads before calling any function: one list per kind and namespace. */
export async function readLoopState(admin: KubeClient, config: LoopConfig, rateLimit: RateLimit): Promise<LoopState> {
  const client = admin.impersonating({ user: serviceAccountUser(config.serviceAccount.namespace, config.serviceAccount.name) }, rateLimit);
  const discovery = new ResourceDiscovery(client);
  let signingKey: SigningKeys | undefined;
  try {
    if (config.signingSecretRef) signingKey = await readSigningKeys(client, config.signingSecretRef);
  } catch (error) {
    if (error instanceof SigningSecretError) throw new DiffError(`${loopTitle(config)}: ${error.message}`);
    throw impersonationRefused(error, config.serviceAccount) ?? error;
  }
  // A namespaced Loop sees its own namespace only, as the router confines it.
  const loopScope = { namespaces: config.namespace === undefined ? config.namespaces : new Set([config.namespace]), metadataOnly: config.metadataOnly };
  const primaries = (await listAs(client, discovery, config, config.for, { ...loopScope, selector: true })).items.filter((p) => selectsPrimary(config, p));
  const owned: OwnedStore[] = [];
  for (const kind of config.owns) {
    const store = new ObjectStore<KubeObject>({ [CONTROLLER_UID_INDEX]: controllerUidOf });
    for (const child of (await listAs(client, discovery, config, kind, { ...loopScope, selector: false })).items) store.upsert(child);
    owned.push({ kind, store });
  }
  const related: RelatedStore[] = [];
  for (const relation of config.related) {
    const scope = { namespaces: relationWatchScope(relation, loopScope.namespaces), selector: false, metadataOnly: relation.metadataOnly };
    const { items, namespaced } = await listAs(client, discovery, config, relation.kind, scope);
    const store = new ObjectStore<KubeObject>({ [NAMESPACE_INDEX]: namespaceOf });
    for (const object of items) store.upsert(object);
    related.push({ relation, store, namespaced });
  }
  primaries.sort((a, b) => `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`.localeCompare(`${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`));
  return { config, client, discovery, primaries, owned, related, signingKey };
}

/**
 * A primary as it is now, read as the Loop's ServiceAccount in the form the router holds it (metadata only
 * if the Loop says so); undefined when it is gone or may not be read one by one (the router only lists it).
 */
export async function rereadPrimary(state: LoopState, primary: KubeObject): Promise<KubeObject | undefined> {
  const resource = await state.discovery.resolve(primary.apiVersion ?? '', primary.kind ?? '');
  const { name = '', namespace } = primary.metadata ?? {};
  try {
    const current = await state.client.getIfExists<KubeObject>({ path: objectPath(resource, name, resource.namespaced ? namespace : undefined), ...(state.config.metadataOnly ? { accept: METADATA_JSON_ACCEPT } : {}) });
    return current && { ...current, apiVersion: resource.apiVersion, kind: resource.kind };
  } catch (error) {
    if (isApiError(error, 403)) return undefined;
    throw error;
  }
}
