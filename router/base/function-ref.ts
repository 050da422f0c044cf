// spec.function.ref: validation of the reference and its resolution into the URL the router calls, from
// the referenced Service (its DNS name in the cluster domain) or Knative Service (status.address.url).
import { KNATIVE_SERVING_API_VERSION, type FunctionRef } from '../../api/loop.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { functionUrlProblem, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A validated reference: what the router watches and how it turns the object into a URL. */
export interface FunctionRefConfig {
  apiVersion: 'v1' | typeof KNATIVE_SERVING_API_VERSION;
  kind: 'Service';
  namespace: string;
  name: string;
  port: number | undefined;
  path: string;
}

export type RefResolution = { ok: true; url: string } | { ok: false; reason: 'FunctionRefNotFound' | 'FunctionRefNotReady' | 'FunctionRefInvalid'; message: string };

/** Why `ref` is not a usable reference (field and problem), or the validated reference. */
export function parseFunctionRef(value: unknown): FunctionRefConfig | { field: string; problem: string } {
  const ref = value as Partial<FunctionRef> | undefined;
  if (!ref || typeof ref !== 'object') return { field: 'spec.function.ref', problem: 'must be an object { name, namespace, port }' };
  const apiVersion = ref.apiVersion ?? 'v1';
  if (apiVersion !== 'v1' && apiVersion !== KNATIVE_SERVING_API_VERSION) {
    return { field: 'spec.function.ref.apiVersion', problem: `"${String(apiVersion)}" is not supported; want "v1" (Service) or "${KNATIVE_SERVING_API_VERSION}" (Knative Service)` };
  }
  if ((ref.kind ?? 'Service') !== 'Service') return { field: 'spec.function.ref.kind', problem: `"${String(ref.kind)}" is not supported; want "Service"` };
  for (const field of ['name', 'namespace'] as const) {
    const v = ref[field];
    if (typeof v !== 'string' || !DNS_LABEL.test(v) || v.length > 63) return { field: `spec.function.ref.${field}`, problem: `"${String(v)}" is not a DNS label` };
  }
  const knative = apiVersion === KNATIVE_SERVING_API_VERSION;
  if (knative && ref.port !== undefined) return { field: 'spec.function.ref.port', problem: 'is not used for a Knative Service (its status.address.url is called)' };
  if (!knative && (!Number.isInteger(ref.port) || (ref.port as number) < 1 || (ref.port as number) > 65535)) {
    return { field: 'spec.function.ref.port', problem: `must be a port number (1-65535) of the Service, got ${JSON.stringify(ref.port)}` };
  }
  const path = ref.path ?? '/';
  if (typeof path !== 'string' || !path.startsWith('/') || /\s/.test(path)) return { field: 'spec.function.ref.path', problem: `"${String(path)}" must start with "/"` };
  return { apiVersion, kind: 'Service', namespace: ref.namespace as string, name: ref.name as string, port: knative ? undefined : ref.port, path };
}

export function describeRef(ref: FunctionRefConfig): string {
  return `${ref.apiVersion === 'v1' ? 'Service' : 'Knative Service'} ${ref.namespace}/${ref.name}`;
}

function joinPath(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** The URL for `ref` given the referenced object as the router's cache holds it (undefined: absent). */
export function resolveFunctionRef(ref: FunctionRefConfig, object: KubeObject | undefined, policy: FunctionUrlPolicy): RefResolution {
  const what = describeRef(ref);
  if (!object) return { ok: false, reason: 'FunctionRefNotFound', message: `${what} does not exist` };
  let url: string;
  if (ref.apiVersion === 'v1') {
    const ports = ((object as { spec?: { ports?: Array<{ port?: number }> } }).spec?.ports ?? []).map((p) => p.port);
    if (!ports.includes(ref.port)) {
      return { ok: false, reason: 'FunctionRefInvalid', message: `${what} has no port ${ref.port} (it has ${ports.length > 0 ? ports.join(', ') : 'none'})` };
    }
    url = `http://${ref.name}.${ref.namespace}.svc.${policy.clusterDomain}:${ref.port}${ref.path}`;
  } else {
    const address = (object as { status?: { address?: { url?: unknown } } }).status?.address?.url;
    if (typeof address !== 'string' || address === '') return { ok: false, reason: 'FunctionRefNotReady', message: `${what} has no status.address.url yet` };
    url = joinPath(address, ref.path);
  }
  const problem = functionUrlProblem(url, policy);
  if (problem) return { ok: false, reason: 'FunctionRefInvalid', message: `${what} resolves to ${url}: ${problem}` };
  return { ok: true, url };
}
