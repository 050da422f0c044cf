// The Loop and ClusterLoop resources (api/loop.ts) and their validation into the router's LoopConfig.
import type { V1LabelSelector } from '@kubernetes/client-node';
import { validateLabelSelector } from '../../lib/kube/label-selector.ts';
import { FINALIZER_PREFIX, loopIdentity, NAMESPACED_FINALIZER_PREFIX, type Loop, type LoopSpec, type SecretKeyRef, type ServiceAccountRef } from '../../api/loop.ts';
import type { KindRef } from '../../api/meta.ts';
import { parseFunctionRef, type FunctionRefConfig } from './function-ref.ts';
import { DEFAULT_FUNCTION_URL_POLICY, functionUrlProblem, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { parseRelated, RelatedSpecError, type RelationConfig } from './related-relation.ts';
import { confineLoopSpec } from './loop-confinement.ts';

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
}

export class LoopSpecError extends Error {
  constructor(
    readonly loop: string,
    readonly field: string,
    problem: string,
  ) {
    super(`Loop ${loop}: ${field} ${problem}`);
    this.name = 'LoopSpecError';
  }
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

function positive(loop: string, field: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > max) {
    throw new LoopSpecError(loop, field, `must be a number in (0, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/**
 * Caps (also in the CRD schema): a function is pure and answers in milliseconds, and every call in flight
 * holds a socket and up to one reply's memory, so a Loop cannot ask for a thousand at once or an hour each.
 */
export const MAX_TIMEOUT_SECONDS = 60;
export const MAX_CONCURRENCY = 64;

function secretKeyRef(loop: string, value: unknown): SecretKeyRef | undefined {
  if (value === undefined) return undefined;
  const field = 'spec.function.signingSecretRef';
  const ref = value as Partial<Record<keyof SecretKeyRef, unknown>> | null;
  if (!ref || typeof ref !== 'object') throw new LoopSpecError(loop, field, 'must be { name, namespace, key }');
  if (typeof ref.name !== 'string' || !/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(ref.name) || ref.name.length > 253) {
    throw new LoopSpecError(loop, `${field}.name`, 'must be a Secret name');
  }
  if (typeof ref.namespace !== 'string' || !DNS_LABEL.test(ref.namespace)) throw new LoopSpecError(loop, `${field}.namespace`, 'must be a namespace name');
  if (typeof ref.key !== 'string' || !SECRET_KEY.test(ref.key) || ref.key.length > 253) throw new LoopSpecError(loop, `${field}.key`, 'must be a Secret data key');
  return { name: ref.name, namespace: ref.namespace, key: ref.key };
}

/** `url` is the Loop's literal URL; with a ref the URL is resolved later and the bundle applies when it is https. */
function caBundle(loop: string, value: unknown, url: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const field = 'spec.function.caBundle';
  if (url !== undefined && !url.startsWith('https:')) throw new LoopSpecError(loop, field, 'is only used with an https url');
  const pem = typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new LoopSpecError(loop, field, 'must be base64 of PEM certificates');
  return pem;
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

function checkFunctionUrl(name: string, raw: unknown, urlPolicy: FunctionUrlPolicy): void {
  if (typeof raw !== 'string') throw new LoopSpecError(name, 'spec.function.url', 'must be a string');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LoopSpecError(name, 'spec.function.url', `"${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LoopSpecError(name, 'spec.function.url', 'must be http or https');
  const urlProblem = functionUrlProblem(raw, urlPolicy);
  if (urlProblem) throw new LoopSpecError(name, 'spec.function.url', `"${raw}": ${urlProblem}`);
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
  const fn = spec.function;
  if (!fn || typeof fn !== 'object') throw new LoopSpecError(name, 'spec.function', 'is required ({ url } or { ref })');
  if ((fn.url === undefined) === (fn.ref === undefined)) throw new LoopSpecError(name, 'spec.function', 'must have exactly one of url and ref');
  let functionRef: FunctionRefConfig | undefined;
  if (fn.ref !== undefined) {
    const parsed = parseFunctionRef(fn.ref);
    if ('problem' in parsed) throw new LoopSpecError(name, parsed.field, parsed.problem);
    functionRef = parsed;
  } else {
    checkFunctionUrl(name, fn.url, urlPolicy);
  }
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
    functionUrl: fn.url,
    functionRef,
    urlPolicy,
    serviceAccount,
    timeoutMs: positive(name, 'spec.function.timeoutSeconds', fn.timeoutSeconds, 10, MAX_TIMEOUT_SECONDS) * 1000,
    maxConcurrency: Math.floor(positive(name, 'spec.function.maxConcurrency', fn.maxConcurrency, 8, MAX_CONCURRENCY)),
    resyncMs: positive(name, 'spec.resyncPeriodSeconds', spec.resyncPeriodSeconds, 600, 86_400 * 7) * 1000,
    finalize: spec.finalize === true,
    sendDeletes: spec.sendDeletes === true,
    finalizer: own === undefined ? `${FINALIZER_PREFIX}${bareName}` : `${NAMESPACED_FINALIZER_PREFIX}${bareName}`,
    fieldManager: `kubeloop/${name}`,
    signingSecretRef: secretKeyRef(name, fn.signingSecretRef),
    caBundle: caBundle(name, fn.caBundle, fn.url),
    related,
  };
}
