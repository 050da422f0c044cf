// `kubeloop diff`'s view of what the new version's actions on one target would leave: the live object read
// and the same writes the router would send, with `dryRun=All`, as the Loop's ServiceAccount, so defaulting,
// admission and RBAC are included and nothing is ever stored. Events are never sent.
import type { Action, KubeObject, JsonPatchOperation } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { collectionPath, objectPath, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { goJsonStringify } from '../../lib/kube/go-json.ts';
import { refersTo } from '../../lib/kube/object-meta.ts';
import { appliedObject, namespaceFor, namespaceOf, prepareChild, primaryPatch, statusPatch, withResourceVersionTest } from '../../router/index.ts';

export type DryRunOutcome =
  /** What the object would look like after the writes, and what it looks like now (absent: would be created). */
  | { kind: 'object'; live: KubeObject | undefined; after: KubeObject }
  | { kind: 'deleted'; live: KubeObject | undefined }
  /** Nothing to write (events only, or a status equal to the current one). */
  | { kind: 'none' }
  /** The API server refused the dry-run: the new version's write would fail the same way. */
  | { kind: 'refused'; message: string };

export interface DryRunContext {
  /** The Loop's ServiceAccount: a write it may not make is refused in the dry-run too. */
  client: KubeClient;
  discovery: ResourceDiscovery;
  fieldManager: string;
  primary: KubeObject;
  /** The Loop's function sees only metadata: its patch of the primary is tested against what it saw, as the router sends it. */
  metadataOnly?: boolean;
}

const DRY_RUN = { dryRun: 'All' } as const;
const JSON_PATCH = 'application/json-patch+json';

/** The objects' fields only the API server knows, read whole (a metadata-only Loop's primary has none). */
async function readLive(ctx: DryRunContext, resource: ResourceInfo, name: string, namespace: string | undefined): Promise<KubeObject | undefined> {
  return ctx.client.getIfExists<KubeObject>({ path: objectPath(resource, name, namespace) });
}

async function send(ctx: DryRunContext, write: () => Promise<KubeObject | undefined>, live: KubeObject | undefined): Promise<DryRunOutcome> {
  try {
    const after = await write();
    return after ? { kind: 'object', live, after } : { kind: 'deleted', live };
  } catch (error) {
    if (isApiError(error) && error.statusCode !== 401 && error.statusCode < 500) return { kind: 'refused', message: error.message };
    throw error;
  }
}

/** The status write of the router (`statusPatch`), dry-run on the /status subresource. */
async function dryRunStatus(ctx: DryRunContext, status: Record<string, unknown>): Promise<DryRunOutcome> {
  const { primary } = ctx;
  const resource = await ctx.discovery.resolve(primary.apiVersion ?? '', primary.kind ?? '');
  const name = primary.metadata?.name ?? '';
  const namespace = namespaceOf(primary, resource);
  const live = await readLive(ctx, resource, name, namespace);
  if (!live) return { kind: 'refused', message: 'the primary no longer exists' };
  const patch = statusPatch(live, status);
  if (!patch) return { kind: 'none' };
  return send(ctx, () => ctx.client.request<KubeObject>({ method: 'PATCH', path: objectPath(resource, name, namespace, 'status'), query: DRY_RUN, contentType: JSON_PATCH, body: patch }), live);
}

/**
 * The new version's actions on one target, dry-run. Several actions on one target become one write: a
 * delete among them wins, else the first create or apply, else the patches joined in order (each tests the
 * same resourceVersion the function saw, so joining them changes nothing).
 */
export async function dryRunTarget(ctx: DryRunContext, actions: readonly Action[]): Promise<DryRunOutcome> {
  const status = actions.filter((a) => a.op === 'status').at(-1);
  if (status?.op === 'status') return dryRunStatus(ctx, status.status);
  const del = actions.find((a) => a.op === 'delete');
  const write = actions.find((a) => a.op === 'create' || a.op === 'apply');
  const patches = actions.filter((a) => a.op === 'patch');
  if (del?.op === 'delete') {
    const resource = await ctx.discovery.resolve(del.target.apiVersion, del.target.kind);
    const namespace = namespaceFor(resource, del.target.namespace, ctx.primary);
    const live = await readLive(ctx, resource, del.target.name, namespace);
    // The API server reads a DELETE's options from its body when there is one and then ignores the query:
    // dryRun must be in the DeleteOptions, or the object is really deleted.
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', dryRun: ['All'], ...(del.preconditions ? { preconditions: del.preconditions } : {}) };
    return send(ctx, async () => {
      await ctx.client.request({ method: 'DELETE', path: objectPath(resource, del.target.name, namespace), query: DRY_RUN, body });
      return undefined;
    }, live);
  }
  if (write?.op === 'create' || write?.op === 'apply') {
    const resource = await ctx.discovery.resolve(write.object.apiVersion ?? '', write.object.kind ?? '');
    // An apply of the primary itself changes the primary, as the router sends it: never as its own child.
    const object = write.op === 'apply' ? appliedObject(write.object, resource, ctx.primary).object : prepareChild(write.object, ctx.primary, resource.namespaced);
    const namespace = namespaceOf(object, resource);
    const name = object.metadata?.name;
    const live = name ? await readLive(ctx, resource, name, namespace) : undefined;
    if (write.op === 'create') {
      return send(ctx, () => ctx.client.request<KubeObject>({ method: 'POST', path: collectionPath(resource, namespace), query: DRY_RUN, body: object }), live);
    }
    if (!name) return { kind: 'refused', message: 'apply needs metadata.name' };
    return send(ctx, () => ctx.client.request<KubeObject>({ method: 'PATCH', path: objectPath(resource, name, namespace), query: { ...DRY_RUN, fieldManager: ctx.fieldManager, force: true }, contentType: 'application/apply-patch+yaml', body: object }), live);
  }
  const first = patches[0];
  if (first?.op !== 'patch') return { kind: 'none' };
  const resource = await ctx.discovery.resolve(first.target.apiVersion, first.target.kind);
  const namespace = namespaceFor(resource, first.target.namespace, ctx.primary);
  const live = await readLive(ctx, resource, first.target.name, namespace);
  const joined: JsonPatchOperation[] = patches.flatMap((p) => (p.op === 'patch' ? p.patch : []));
  // The tests the router leads the patch with (apply-actions.ts): of what the function saw of the primary, of the
  // version read of any other object; spelled as the router spells them (go-json.ts), or a test of "&" fails.
  const ops = refersTo({ ...first.target, namespace }, ctx.primary) ? primaryPatch(ctx.metadataOnly ?? false, joined, ctx.primary).patch : withResourceVersionTest(joined, live?.metadata?.resourceVersion);
  return send(ctx, () => ctx.client.request<KubeObject>({ method: 'PATCH', path: objectPath(resource, first.target.name, namespace), query: DRY_RUN, contentType: JSON_PATCH, body: goJsonStringify(ops) }), live);
}
