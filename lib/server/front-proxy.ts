// Who is asking, for an aggregated API: the API server (the front proxy) authenticates every caller, then
// calls us over mutual TLS with its proxy client certificate and names the caller in X-Remote-* headers.
// The headers mean something only on a connection that presented that certificate (Kubernetes' requestheader).
import type { UserInfo } from '../kube/access-review.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { peerVerdict, type PeerCertificate } from './client-certificate.ts';

/** kube-system/extension-apiserver-authentication: where the API server publishes its requestheader settings. */
export const AUTHENTICATION_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

export interface RequestHeaderConfig {
  /** PEM of the CA(s) that sign the front proxy's client certificate. */
  caPem: string;
  /** Common names accepted; empty: any certificate that CA signed. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

function jsonList(value: string | undefined, fallback: string[]): string[] {
  if (!value) return fallback;
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) throw new Error(`expected a JSON list of strings, got ${value}`);
  return parsed;
}

/** Pure: the ConfigMap's data; undefined when the API server publishes no requestheader CA (aggregation not set up). */
export function requestHeaderConfig(data: Record<string, string> | undefined): RequestHeaderConfig | undefined {
  const caPem = data?.['requestheader-client-ca-file'];
  if (!caPem) return undefined;
  return {
    caPem,
    allowedNames: jsonList(data['requestheader-allowed-names'], []),
    usernameHeaders: jsonList(data['requestheader-username-headers'], ['X-Remote-User']),
    groupHeaders: jsonList(data['requestheader-group-headers'], ['X-Remote-Group']),
    extraHeaderPrefixes: jsonList(data['requestheader-extra-headers-prefix'], ['X-Remote-Extra-']),
  };
}

/** The requestheader settings the API server publishes; an error that says how to turn aggregation on when it publishes none. */
export async function readRequestHeaderConfig(client: KubeClient): Promise<RequestHeaderConfig> {
  const { namespace, name } = AUTHENTICATION_CONFIGMAP;
  const configMap = await client.request<{ data?: Record<string, string> }>({ path: `/api/v1/namespaces/${namespace}/configmaps/${name}` });
  const config = requestHeaderConfig(configMap.data);
  if (!config) {
    throw new Error(
      `${namespace}/${name} holds no requestheader-client-ca-file: the API server runs without the aggregation layer (start it with --requestheader-client-ca-file and --proxy-client-cert-file)`,
    );
  }
  return config;
}

/** Header values as received, one entry per header line (Node's headersDistinct: repeated lines are never joined). */
export type Headers = Record<string, string | string[] | undefined>;

export type CallerDecision = { ok: true; user: UserInfo | undefined } | { ok: false; code: 401 | 403; reason: 'Unauthorized' | 'Forbidden'; message: string };

const values = (headers: Headers, name: string): string[] => {
  const v = headers[name.toLowerCase()];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/**
 * Pure: the API server with its front-proxy certificate, and the user it names (undefined for its own
 * discovery and availability calls, which name none). Anyone else is refused: the headers of a caller
 * without that certificate are a claim, not an identity.
 */
export function decideCaller(peer: PeerCertificate, headers: Headers, config: RequestHeaderConfig): CallerDecision {
  const verdict = peerVerdict(peer, config.allowedNames);
  if (verdict === 'unauthenticated') {
    return { ok: false, code: 401, reason: 'Unauthorized', message: 'this aggregated API answers only the Kubernetes API server (its front-proxy client certificate): ask the API server (kubeloop history, kubeloop console or kubectl get --raw)' };
  }
  if (verdict === 'forbidden') {
    return { ok: false, code: 403, reason: 'Forbidden', message: `client certificate "${peer.commonName}" is not the API server's front proxy (accepted: ${config.allowedNames.join(', ')})` };
  }
  return { ok: true, user: userFromHeaders(headers, config) };
}

/** Pure: the user, groups and extra the requestheader settings name; undefined when no user header is set. */
export function userFromHeaders(headers: Headers, config: RequestHeaderConfig): UserInfo | undefined {
  const user = config.usernameHeaders.flatMap((h) => values(headers, h))[0];
  if (!user) return undefined;
  const groups = config.groupHeaders.flatMap((h) => values(headers, h));
  const extra: Record<string, string[]> = {};
  for (const prefix of config.extraHeaderPrefixes) {
    const p = prefix.toLowerCase();
    for (const [name, v] of Object.entries(headers)) {
      if (!name.startsWith(p) || v === undefined) continue;
      // Extra keys are percent-encoded in header names (the API server's convention) and case-insensitive.
      const key = decodeURIComponent(name.slice(p.length)).toLowerCase();
      extra[key] = [...(extra[key] ?? []), ...(Array.isArray(v) ? v : [v])];
    }
  }
  return { user, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
}
