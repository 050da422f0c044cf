// The Loop and ClusterLoop resources (api/loop.ts) and their validation into the router's LoopConfig.
import type { V1LabelSelector } from '@kubernetes/client-node';
import { validateLabelSelector } from '../../lib/kube/label-selector.ts';
import { FINALIZER_PREFIX, loopIdentity, NAMESPACED_FINALIZER_PREFIX, type Loop, type LoopSpec, type SecretKeyRef, type ServiceAccountRef } from '../../api/loop.ts';

export { LoopSpecError, MAX_CONCURRENCY, MAX_TIMEOUT_SECONDS, type CanaryConfig, type FunctionTarget } from './function-spec.ts';
import type { KindRef } from '../../api/meta.ts';
import type { FunctionRefConfig } from './function-ref.ts';
import { DEFAULT_FUNCTION_URL_POLICY, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, parseCanary, parseFunctionTarget, parseShadow, positive, type CanaryConfig, type FunctionTarget } from './function-spec.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { MAX_BATCH_ITEMS } from '../../lib/contract/batch.ts';
import { parseRelated, RelatedSpecError, type RelationConfig } from './related-relation.ts';
import { confineLoopSpec } from './loop-confinement.ts';

/** Whether a Loop owns the kind (spec.owns): its children of that kind are created, deleted and expected by it. */
export function isOwnedKind(loop: Pick<LoopConfig, 'owns'>, apiVersion: string | undefined, kind: string | undefined): boolean {
  return loop.owns.some((o) => o.apiVersion === apiVersion && o.kind === kind);
}

/** A validated Loop with defaults applied: what the router runs. */
export interface LoopConfig {
  name: string;
  /** A namespaced Loop's own namespace, which confines it; undefined for a ClusterLoop (docs/tenants.md). */
  namespace: string | undefined;
  /** The loop's identity (`<namespace>/<name>` or `<name>`, loopIdentity): every map, metric and log is keyed by it. */
  id: string;
  generation: number;
  for: KindRef;
  owns: KindRef[];
  /** undefined = all namespaces. */
  namespaces: Set<string> | undefined;
  selector: V1LabelSelector | undefined;
  metadataOnly: boolean;
  ignoreStatusChanges: boolean;
  /** spec.function.url; undefined when the Loop names its function by `ref`. */
  functionUrl: string | undefined;
  /** spec.function.ref, resolved by the LoopRunner while it runs (function-ref.ts). */
  functionRef: FunctionRefConfig | undefined;
  /** The policy a resolved reference's URL must pass, with the cluster domain Service URLs are built in. */
  urlPolicy: FunctionUrlPolicy;
  /** Who the router acts as for this Loop. */
  serviceAccount: ServiceAccountRef;
  timeoutMs: number;
  maxConcurrency: number;
  /** Most calls one HTTP request carries (spec.function.batch); 1 = batching off. */
  batchMaxSize: number;
  /** How long a call waits for others of the Loop to share its request (spec.function.batch.windowMs). */
  batchWindowMs: number;
  resyncMs: number;
  finalize: boolean;
  sendDeletes: boolean;
  finalizer: string;
  fieldManager: string;
  signingSecretRef: SecretKeyRef | undefined;
  /** PEM, decoded from spec.function.caBundle. */
  caBundle: string | undefined;
  /** spec.related: the objects sent besides the primary and its children, and what they trigger. */
  related: RelationConfig[];
  /** The key(s) read from signingSecretRef before the Loop starts, replaced when the Secret is rotated. */
  signingKey?: SigningKeys;
  /** spec.function.shadow: called with every request, never applied (docs/safe-changes.md). */
  shadow: FunctionTarget | undefined;
  /** spec.function.canary: answers for its share of the keys until its error budget is spent. */
  canary: CanaryConfig | undefined;
}

/** The Ready reason of a Loop refused for its spec: a missing ServiceAccount has its own. */
export function loopSpecErrorReason(error: LoopSpecError): 'ServiceAccountRequired' | 'InvalidSpec' {
  return error.field === 'spec.serviceAccount' ? 'ServiceAccountRequired' : 'InvalidSpec';
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function kindRef(loop: string, field: string, value: unknown): KindRef {
  const ref = value as Partial<KindRef> | undefined;
  if (!ref || typeof ref !== 'object') throw new LoopSpecError(loop, field, 'is required ({ apiVersion, kind })');
  if (typeof ref.apiVersion !== 'string' || ref.apiVersion === '') throw new LoopSpecError(loop, `${field}.apiVersion`, 'is required');
  if (typeof ref.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(ref.kind)) {
    throw new LoopSpecError(loop, `${field}.kind`, `"${String(ref.kind)}" is not a Kind (CamelCase)`);
  }
  return { apiVersion: ref.apiVersion, kind: ref.kind };
}

/** spec.function.batch: on by default, at most MAX_BATCH_ITEMS per request. */
export const DEFAULT_BATCH_MAX_SIZE = 16;
/**
 * How long a call waits for the Loop's other calls to join its batch. 0 (only the calls of the same event-loop
 * turn) by default: a window of a few ms cut live pods' function requests and router CPU in the benchmarks, but
 * lengthened their p50 and p99 far beyond the window on a loaded machine, for reasons not yet found
 * (docs/performance.md, "A gathering window for batched calls"); a Loop opts in with windowMs.
 */
export const DEFAULT_BATCH_WINDOW_MS = 0;
/** The longest gathering window a Loop may ask for: a call is never held longer than this for others. */
export const MAX_BATCH_WINDOW_MS = 100;

function batchSettings(loop: string, value: unknown): { maxSize: number; windowMs: number } {
  if (value === undefined) return { maxSize: DEFAULT_BATCH_MAX_SIZE, windowMs: DEFAULT_BATCH_WINDOW_MS };
  const batch = value as { enabled?: unknown; maxSize?: unknown; windowMs?: unknown } | null;
  if (!batch || typeof batch !== 'object') throw new LoopSpecError(loop, 'spec.function.batch', 'must be { enabled, maxSize, windowMs }');
  if (batch.enabled !== undefined && typeof batch.enabled !== 'boolean') throw new LoopSpecError(loop, 'spec.function.batch.enabled', 'must be true or false');
  const max = batch.maxSize ?? DEFAULT_BATCH_MAX_SIZE;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_BATCH_ITEMS) {
    throw new LoopSpecError(loop, 'spec.function.batch.maxSize', `must be an integer in [1, ${MAX_BATCH_ITEMS}], got ${JSON.stringify(batch.maxSize)}`);
  }
  const windowMs = batch.windowMs ?? DEFAULT_BATCH_WINDOW_MS;
  if (typeof windowMs !== 'number' || !Number.isInteger(windowMs) || windowMs < 0 || windowMs > MAX_BATCH_WINDOW_MS) {
    throw new LoopSpecError(loop, 'spec.function.batch.windowMs', `must be an integer number of milliseconds in [0, ${MAX_BATCH_WINDOW_MS}], got ${JSON.stringify(batch.windowMs)}`);
  }
  return { maxSize: batch.enabled === false ? 1 : max, windowMs };
}

function serviceAccountRef(loop: string, value: unknown): ServiceAccountRef {
  const ref = value as Partial<ServiceAccountRef> | undefined;
  if (!ref || typeof ref !== 'object') {
    throw new LoopSpecError(loop, 'spec.serviceAccount', 'is required: { namespace, name } of the ServiceAccount the router acts as for this Loop');
  }
  for (const field of ['namespace', 'name'] as const) {
    const v = ref[field];
    if (typeof v !== 'string' || v.length > (field === 'name' ? 253 : 63) || !(field === 'name' ? DNS_SUBDOMAIN : DNS_LABEL).test(v)) {
      throw new LoopSpecError(loop, `spec.serviceAccount.${field}`, `${JSON.stringify(v)} is not a ${field === 'name' ? 'ServiceAccount' : 'namespace'} name`);
    }
  }
  return { namespace: ref.namespace as string, name: ref.name as string };
}

/**
 * Validates a Loop object (from the API or inline); the error names the bad field. The function URL is
 * checked against `urlPolicy` (the same rules as the chart's admission policy).
 */
export function parseLoop(loop: Pick<Loop, 'metadata' | 'spec'> & { kind?: string }, urlPolicy: FunctionUrlPolicy = DEFAULT_FUNCTION_URL_POLICY): LoopConfig {
  const own = loop.kind === 'Loop' ? (loop.metadata?.namespace ?? '') : undefined;
  const name = loopIdentity(own, loop.metadata?.name ?? '');
  const bareName = loop.metadata?.name ?? '';
  if (!DNS_LABEL.test(bareName) || bareName.length > 63) throw new LoopSpecError(name || '(unnamed)', 'metadata.name', 'must be a DNS label');
  if (own !== undefined && (!DNS_LABEL.test(own) || own.length > 63)) throw new LoopSpecError(name, 'metadata.namespace', 'is required for a Loop (a namespaced kind)');
  let spec = loop.spec as Partial<LoopSpec> | undefined;
  if (!spec || typeof spec !== 'object') throw new LoopSpecError(name, 'spec', 'is required');
  if (own !== undefined) {
    // A Loop's namespaces default to its own and may name no other (docs/tenants.md).
    const confined = confineLoopSpec(own, spec);
    if ('problem' in confined) throw new LoopSpecError(name, confined.field, confined.problem);
    spec = confined.spec;
  }
  const primary = kindRef(name, 'spec.for', spec.for);
  const owns = (spec.owns ?? []).map((ref, i) => kindRef(name, `spec.owns[${i}]`, ref));
  const fn = spec.function as LoopSpec['function'] | undefined;
  const live = parseFunctionTarget(name, 'spec.function', fn, urlPolicy, { maxConcurrency: 8 });
  if (spec.selector) {
    try {
      validateLabelSelector(spec.selector, 'spec.selector');
    } catch (error) {
      throw new LoopSpecError(name, 'spec.selector', (error as Error).message.replace(/^spec\.selector\.?/, ''));
    }
  }
  for (const [i, ns] of (spec.namespaces ?? []).entries()) {
    if (typeof ns !== 'string' || !DNS_LABEL.test(ns)) throw new LoopSpecError(name, `spec.namespaces[${i}]`, `"${String(ns)}" is not a namespace name`);
  }
  const serviceAccount = serviceAccountRef(name, spec.serviceAccount);
  const batch = batchSettings(name, fn?.batch);
  let related: RelationConfig[];
  try {
    related = parseRelated(spec.related);
  } catch (error) {
    if (error instanceof RelatedSpecError) throw new LoopSpecError(name, error.field, error.problem);
    throw error;
  }
  return {
    name: bareName,
    namespace: own,
    id: name,
    generation: loop.metadata?.generation ?? 0,
    for: primary,
    owns,
    namespaces: spec.namespaces && spec.namespaces.length > 0 ? new Set(spec.namespaces) : undefined,
    selector: spec.selector,
    metadataOnly: spec.metadataOnly === true,
    ignoreStatusChanges: spec.ignoreStatusChanges === true,
    functionUrl: live.url,
    functionRef: live.ref,
    urlPolicy,
    serviceAccount,
    timeoutMs: live.timeoutMs,
    maxConcurrency: live.maxConcurrency,
    batchMaxSize: batch.maxSize,
    batchWindowMs: batch.windowMs,
    resyncMs: positive(name, 'spec.resyncPeriodSeconds', spec.resyncPeriodSeconds, 600, 86_400 * 7) * 1000,
    finalize: spec.finalize === true,
    sendDeletes: spec.sendDeletes === true,
    finalizer: own === undefined ? `${FINALIZER_PREFIX}${bareName}` : `${NAMESPACED_FINALIZER_PREFIX}${bareName}`,
    fieldManager: `kubeloop/${name}`,
    signingSecretRef: live.signingSecretRef,
    caBundle: live.caBundle,
    related,
    shadow: parseShadow(name, fn?.shadow, urlPolicy),
    canary: parseCanary(name, fn?.canary, urlPolicy, live.maxConcurrency),
  };
}
