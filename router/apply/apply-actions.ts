// Apply: the one write path of the router. Turns a function's actions (and the router's own finalizer
// writes) into API writes, in order, each checked against the Loop's authority. A conflict (a failed test of
// what the function saw, 409) stops the batch; the reconcile decision backs the key off and retries.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type {
  Action,
  ApplyAction,
  CreateAction,
  DeleteAction,
  JsonPatchOperation,
  KubeObject,
  ObjectTarget,
  PatchAction,
  StatusAction,
} from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { isApiError, KubeApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { objectKey, refersTo } from '../../lib/kube/object-meta.ts';
import { collectionPath, kindKey, objectPath, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { checkAuthority, checkConfinement, checkKind, type AuthorityContext } from './authority.ts';
import type { EventRecorder } from './event-recorder.ts';
import { createOnce, UncertainCreateError, withConcreteName } from './create-child.ts';
import type { Expectations } from './expectations.ts';
import { AppliedWrites, appliedWritesOf } from './applied-writes.ts';
import { isOwnedKind, type LoopConfig } from '../base/loop-spec.ts';
import { appliedObject, namespaceFor, namespaceOf, targetOf } from './action-target.ts';
import { isConflict, sendJsonPatch } from './json-patch.ts';
import { primaryPatch, type PatchToSend } from './seen-metadata.ts';
import { prepareChild, statusPatch, withResourceVersionTest } from './patch-building.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';
import { tenantOf } from '../base/tenant-weights.ts';

/** A write to the primary's metadata.finalizers: the router's own, never a function's. */
export interface FinalizerAction {
  op: 'finalizer';
  patch: JsonPatchOperation[];
}

/** What applyActions writes: a function's actions plus the router's finalizer writes. */
export type RouterAction = Action | FinalizerAction;

export type ApplyOutcome =
  /** primaryResourceVersion: what the last JSON patch or apply of the primary produced, for OwnWrites. */
  | { result: 'done'; refused: number; primaryResourceVersion?: string }
  | { result: 'conflict'; message: string }
  | { result: 'failed'; message: string; retryable: boolean };

export interface ApplyContext {
  client: KubeClient;
  discovery: ResourceDiscovery;
  loop: LoopConfig;
  primary: KubeObject;
  /** The primary's queue key, under which expectations are recorded. */
  ownerKey: string;
  lookup: AuthorityContext['lookup'];
  expectations: Expectations;
  events: EventRecorder;
  metrics: RouterMetrics;
  logger: Logger;
  /** The reconcile's trace and flight-recorder entry (reconcile-trace.ts). */
  writes?: WriteObserver;
  /** Set per write while observed: sent with its API requests so the API server's spans join the write's. */
  requestHeaders?: Record<string, string>;
  /** What this Loop last applied per object (applied-writes.ts); the Loop's own memory when omitted. */
  appliedWrites?: AppliedWrites;
}

/** `unchanged`: an apply not sent, the same configuration as this Loop's last apply to the object that apply produced. */
type ActionResult = 'applied' | 'skipped' | 'unchanged' | 'exists' | 'notfound' | 'refused';

/** What one write did, for its span and the flight recorder. */
export interface WriteOutcome {
  result: ActionResult | 'conflict' | 'error';
  /** The API server's status code of a failed write. */
  status?: number;
  message?: string;
}

/** One observed write: its end, and the headers its API requests carry (the write span's trace context). */
export interface ObservedWrite {
  end(outcome: WriteOutcome): void;
  headers: Record<string, string>;
}

/** Watches each write of a batch: begin() is called before it, end() after. */
export interface WriteObserver {
  begin(action: RouterAction): ObservedWrite;
}

/**
 * How long one create is sent again through a cut connection or a restarting API server: long enough for
 * a resend after a cut, short beside the lease margin (a replica that lost the lease must stop writing
 * before the standby starts); a longer outage leaves the child expected instead.
 */
const CREATE_RETRY_MS = 2000;

/** What one batch wrote that the reconcile needs afterwards. */
interface Written {
  primaryResourceVersion?: string;
}

const APPLY_PATCH = 'application/apply-patch+yaml';

export async function applyActions(ctx: ApplyContext, actions: readonly RouterAction[]): Promise<ApplyOutcome> {
  let refused = 0;
  const written: Written = {};
  for (const [index, action] of actions.entries()) {
    let result: ActionResult;
    const observed = ctx.writes?.begin(action);
    try {
      result = await applyOne(observed ? { ...ctx, requestHeaders: observed.headers } : ctx, action, written);
    } catch (error) {
      const conflict = isConflict(error);
      ctx.metrics.actions.inc({ loop: ctx.loop.id, op: action.op, result: conflict ? 'conflict' : 'error' });
      observed?.end(failedWrite(error, conflict));
      const message = `action ${index} (${action.op}): ${error instanceof Error ? error.message : String(error)}`;
      if (conflict) return { result: 'conflict', message };
      return { result: 'failed', message, retryable: isRetryable(error) };
    }
    ctx.metrics.actions.inc({ loop: ctx.loop.id, op: action.op, result });
    observed?.end({ result });
    if (result === 'refused') refused += 1;
  }
  return { result: 'done', refused, ...written };
}

function failedWrite(error: unknown, conflict: boolean): WriteOutcome {
  const status = error instanceof KubeApiError ? error.statusCode : undefined;
  return { result: conflict ? 'conflict' : 'error', ...(status === undefined ? {} : { status }), message: error instanceof Error ? error.message : String(error) };
}

/** Server trouble, throttling and a missing object may clear up; a 4xx about the write itself will not. */
function isRetryable(error: unknown): boolean {
  return !(error instanceof KubeApiError) || error.statusCode >= 500 || error.statusCode === 429 || error.statusCode === 404;
}

function applyOne(ctx: ApplyContext, action: RouterAction, written: Written): Promise<ActionResult> {
  switch (action.op) {
    case 'event':
      ctx.events.record(ctx.primary, { type: action.type, reason: action.reason, message: action.message }, { tenant: tenantOf(ctx.loop), source: 'function' });
      return Promise.resolve('applied');
    case 'status':
      return applyStatus(ctx, action);
    case 'finalizer':
      return applyFinalizer(ctx, action);
    case 'patch':
      return applyPatch(ctx, action, written);
    case 'create':
      return applyCreate(ctx, action);
    case 'apply':
      return applyServerSide(ctx, action, written);
    case 'delete':
      return applyDelete(ctx, action);
  }
}

async function applyStatus(ctx: ApplyContext, action: StatusAction): Promise<ActionResult> {
  const patch = statusPatch(ctx.primary, action.status);
  if (!patch) return 'skipped';
  return patchPrimary(ctx, patch, 'status');
}

function applyFinalizer(ctx: ApplyContext, action: FinalizerAction): Promise<ActionResult> {
  return patchPrimary(ctx, action.patch);
}

/** A JSON patch to the primary (or its status); a primary that is gone has nothing left to write. */
async function patchPrimary(ctx: ApplyContext, patch: JsonPatchOperation[], subresource?: 'status'): Promise<ActionResult> {
  const { primary } = ctx;
  const resource = await ctx.discovery.resolve(primary.apiVersion ?? '', primary.kind ?? '');
  try {
    await sendPatch(ctx, resource, targetOf(primary, resource, primary), { patch }, subresource);
  } catch (error) {
    // A 404 for the object itself, not for a resource the server does not serve.
    if (isApiError(error, 404) && error.reason === 'NotFound' && !/the server could not find the requested resource/.test(error.message)) return 'notfound';
    throw error;
  }
  return 'applied';
}

async function applyPatch(ctx: ApplyContext, action: PatchAction, written: Written): Promise<ActionResult> {
  if (!kindAllowed(ctx, action, action.target.apiVersion, action.target.kind)) return 'refused';
  const resource = await ctx.discovery.resolve(action.target.apiVersion, action.target.kind);
  const target: ObjectTarget = { ...action.target, namespace: namespaceFor(resource, action.target.namespace, ctx.primary) };
  if (!(await authorised(ctx, action, target, resource))) return 'refused';
  // The tests hold the object as the function saw it: the primary of the request, or the cached child.
  const isPrimary = refersTo(target, ctx.primary);
  try {
    const after = await sendPatch(ctx, resource, target, isPrimary ? primaryPatch(ctx.loop.metadataOnly, action.patch, ctx.primary) : { patch: withResourceVersionTest(action.patch, lookupTarget(ctx, target)?.metadata?.resourceVersion) });
    if (isPrimary) written.primaryResourceVersion = after.metadata?.resourceVersion;
  } catch (error) {
    if (isApiError(error, 404)) return 'notfound';
    throw error;
  }
  return 'applied';
}

/** Sends a JSON patch to a target; a refusal is checked against the cached object (json-patch.ts). */
function sendPatch(ctx: ApplyContext, resource: ResourceInfo, target: ObjectTarget, { patch, guards }: PatchToSend, subresource?: 'status'): Promise<Pick<KubernetesObject, 'metadata'>> {
  return sendJsonPatch(ctx.client, objectPath(resource, target.name, target.namespace, subresource), patch, {
    cached: () => lookupTarget(ctx, target),
    ...(guards ? { guards } : {}),
    ...(ctx.requestHeaders ? { headers: ctx.requestHeaders } : {}),
  });
}

async function applyCreate(ctx: ApplyContext, action: CreateAction): Promise<ActionResult> {
  if (!kindAllowed(ctx, action, action.object.apiVersion, action.object.kind)) return 'refused';
  const resource = await ctx.discovery.resolve(action.object.apiVersion ?? '', action.object.kind ?? '');
  const object = withConcreteName(prepareChild(action.object, ctx.primary, resource.namespaced));
  if (!(await authorised(ctx, { ...action, object }, targetOf(object, resource, ctx.primary), resource))) return 'refused';
  try {
    const outcome = await createOnce(ctx.client, collectionPath(resource, namespaceOf(object, resource)), object, CREATE_RETRY_MS, ctx.requestHeaders);
    // An existing name means an earlier attempt got through: done, and the owner waits to see it all the same.
    expectCreated(ctx, resource, outcome.result === 'created' ? outcome.object : object);
    if (outcome.result === 'exists') return 'exists';
  } catch (error) {
    if (error instanceof UncertainCreateError) expectCreated(ctx, resource, object);
    throw error;
  }
  return 'applied';
}

/** Server-side apply, forced, as the Loop's field manager; the primary itself is applied as given. */
async function applyServerSide(ctx: ApplyContext, action: ApplyAction, written: Written): Promise<ActionResult> {
  if (!kindAllowed(ctx, action, action.object.apiVersion, action.object.kind)) return 'refused';
  const resource = await ctx.discovery.resolve(action.object.apiVersion ?? '', action.object.kind ?? '');
  // The primary in its own namespace when the function left it out, as for a patch's target and a child.
  const { object, isPrimary } = appliedObject(action.object, resource, ctx.primary);
  if (!(await authorised(ctx, { ...action, object }, targetOf(object, resource, ctx.primary), resource))) return 'refused';
  const name = object.metadata?.name;
  if (!name) throw new Error('apply needs metadata.name');
  const namespace = namespaceOf(object, resource);
  const memory = ctx.appliedWrites ?? appliedWritesOf(ctx.loop);
  const key = `${kindKey(resource.apiVersion, resource.kind)} ${namespace ?? ''}/${name}`;
  const digest = AppliedWrites.digest(object);
  const current = isPrimary ? ctx.primary : ctx.lookup(resource.apiVersion, resource.kind, namespace, name);
  if (memory.unchanged(key, digest, current?.metadata?.resourceVersion)) return 'unchanged';
  const applied = await ctx.client.request<KubeObject>({
    method: 'PATCH',
    path: objectPath(resource, name, namespace),
    query: { fieldManager: ctx.loop.fieldManager, force: true },
    contentType: APPLY_PATCH,
    body: object,
    ...(ctx.requestHeaders ? { headers: ctx.requestHeaders } : {}),
  });
  memory.remember(key, digest, applied.metadata?.resourceVersion);
  if (isPrimary) written.primaryResourceVersion = applied.metadata?.resourceVersion;
  else expectCreated(ctx, resource, applied);
  return 'applied';
}

async function applyDelete(ctx: ApplyContext, action: DeleteAction): Promise<ActionResult> {
  if (!kindAllowed(ctx, action, action.target.apiVersion, action.target.kind)) return 'refused';
  const resource = await ctx.discovery.resolve(action.target.apiVersion, action.target.kind);
  const target: ObjectTarget = { ...action.target, namespace: namespaceFor(resource, action.target.namespace, ctx.primary) };
  if (!(await authorised(ctx, action, target, resource))) return 'refused';
  const cached = lookupTarget(ctx, target);
  try {
    await ctx.client.request({
      method: 'DELETE',
      path: objectPath(resource, target.name, target.namespace),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', ...(action.preconditions ? { preconditions: action.preconditions } : {}) },
      ...(ctx.requestHeaders ? { headers: ctx.requestHeaders } : {}),
    });
  } catch (error) {
    if (isApiError(error, 404)) return 'notfound';
    throw error;
  }
  if (isOwnedKind(ctx.loop, resource.apiVersion, resource.kind)) {
    const uid = action.preconditions?.uid ?? cached?.metadata?.uid;
    ctx.expectations.expectDelete(ctx.ownerKey, { kind: kindKey(resource.apiVersion, resource.kind), key: objectKey(target), ...(uid ? { uid } : {}) });
  }
  return 'applied';
}

/** The owner waits for the watch to show a child it created (Expectations). */
function expectCreated(ctx: ApplyContext, resource: ResourceInfo, child: KubeObject): void {
  if (!isOwnedKind(ctx.loop, resource.apiVersion, resource.kind)) return;
  ctx.expectations.expectCreate(ctx.ownerKey, { kind: kindKey(resource.apiVersion, resource.kind), key: objectKey(child.metadata) });
}

function lookupTarget(ctx: ApplyContext, target: ObjectTarget): KubernetesObject | undefined {
  return ctx.lookup(target.apiVersion, target.kind, target.namespace, target.name);
}

/** The kind check, before discovery: a reply naming other kinds or bad apiVersions causes no lookups. */
function kindAllowed(ctx: ApplyContext, action: Action, apiVersion: string | undefined, kind: string | undefined): boolean {
  const verdict = checkKind(ctx.loop, action.op, apiVersion, kind);
  if (verdict.allowed) return true;
  refuse(ctx, action, { apiVersion, kind }, verdict.reason);
  return false;
}

/**
 * The full authority check. A named target the cache does not hold is read live (as the Loop's
 * ServiceAccount): an object the router has not seen is never assumed to be free to take.
 */
async function authorised(ctx: ApplyContext, action: Action, target: ObjectTarget, resource: ResourceInfo): Promise<boolean> {
  const checked: Action = action.op === 'patch' || action.op === 'delete' ? { ...action, target } : action;
  const confined = checkConfinement(ctx.loop, action.op, target, resource.namespaced);
  if (!confined.allowed) {
    refuse(ctx, action, target, confined.reason);
    return false;
  }
  let current: KubernetesObject | undefined;
  if (action.op !== 'create' && target.name !== '' && !refersTo(target, ctx.primary)) {
    current = lookupTarget(ctx, target);
    if (!current) {
      try {
        current = await ctx.client.request<KubernetesObject>({ path: objectPath(resource, target.name, target.namespace) });
      } catch (error) {
        if (isApiError(error, 403)) {
          refuse(ctx, action, target, `Loop ${ctx.loop.id} may not ${action.op} ${target.kind} ${target.namespace ? `${target.namespace}/` : ''}${target.name}: its ServiceAccount may not read it`);
          return false;
        }
        if (!isApiError(error, 404)) throw error;
      }
    }
  }
  const verdict = checkAuthority({ loop: ctx.loop, primary: ctx.primary, lookup: () => current, targetNamespaced: resource.namespaced }, checked);
  if (verdict.allowed) return true;
  refuse(ctx, action, target, verdict.reason);
  return false;
}

function refuse(ctx: ApplyContext, action: Action, target: Partial<ObjectTarget>, reason: string): void {
  ctx.metrics.refusals.inc({ loop: ctx.loop.id });
  ctx.logger.warn({ op: action.op, target }, reason);
  ctx.events.record(ctx.primary, { type: 'Warning', reason: 'ActionRefused', message: reason }, { tenant: tenantOf(ctx.loop), source: 'router' });
}
