// Loads cluster access from an explicit kubeconfig file, the in-cluster service account, or the usual
// defaults. The common cases (service account; a kubeconfig with certificates or a bearer token) are read
// here; anything else (exec and auth-provider plugins, proxies, merged KUBECONFIG lists) goes to client-node,
// imported only then: it costs ~85 MiB RSS and ~1 s of CPU to load, the router's largest start-up cost.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AgentOptions } from 'node:https';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { SettingError } from '../config/settings.ts';

export interface KubeConfigSource {
  /** Path to a kubeconfig file; wins over everything else. */
  kubeconfig?: string;
  /** Context to use inside the file. */
  context?: string;
}

export type HttpsOptions = AgentOptions & { headers?: Record<string, string> };

/** What a KubeClient needs from a kubeconfig; client-node's KubeConfig is one. */
export interface ClusterCredentials {
  getCurrentCluster(): { server: string } | null;
  /** Sets TLS material and auth headers; called again whenever a token may have been rotated. */
  applyToHTTPSOptions(options: HttpsOptions): Promise<void>;
}

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The credentials a kubeconfig (or the in-cluster service account) names; a problem with it is a SettingError. */
export async function loadKubeConfig(source: KubeConfigSource = {}): Promise<ClusterCredentials> {
  try {
    return await readKubeConfig(source);
  } catch (error) {
    if (error instanceof SettingError) throw error;
    throw new SettingError(`kubeconfig: ${(error as Error).message.replace(/^kubeconfig: /, '')}`);
  }
}

async function readKubeConfig(source: KubeConfigSource): Promise<ClusterCredentials> {
  if (source.kubeconfig && !existsSync(source.kubeconfig)) throw new Error(`kubeconfig: file "${source.kubeconfig}" does not exist`);
  const paths = source.kubeconfig ? [source.kubeconfig] : (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  const inCluster = paths.length === 0 && process.env.KUBERNETES_SERVICE_HOST !== undefined && existsSync(`${SERVICE_ACCOUNT}/token`);
  if (inCluster && !source.context) return serviceAccountCredentials(process.env.KUBERNETES_SERVICE_HOST!, process.env.KUBERNETES_SERVICE_PORT ?? '443');
  const file = paths.length === 0 ? join(homedir(), '.kube', 'config') : paths.length === 1 ? paths[0]! : undefined;
  const simple = file && existsSync(file) ? await simpleKubeconfig(file, source.context) : undefined;
  return simple ?? clientNodeConfig(source, inCluster);
}

/** In-cluster: the service account's CA and token, the token re-read on every refresh (it is rotated). */
function serviceAccountCredentials(host: string, port: string): ClusterCredentials {
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    getCurrentCluster: () => ({ server }),
    applyToHTTPSOptions: async (options) => {
      options.ca = await readFile(`${SERVICE_ACCOUNT}/ca.crt`);
      const token = (await readFile(`${SERVICE_ACCOUNT}/token`, 'utf8')).trim();
      options.headers = { ...options.headers, Authorization: `Bearer ${token}` };
    },
  };
}

type Fields = Record<string, unknown>;
const CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions']);
const USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'extensions']);

function named(list: unknown, name: string | undefined, field: string): Fields | undefined {
  const found = Array.isArray(list) ? (list as Array<{ name?: string } & Fields>).find((entry) => entry?.name === name) : undefined;
  const value = found?.[field];
  return value && typeof value === 'object' ? (value as Fields) : undefined;
}

/**
 * A kubeconfig whose current context uses only certificates and static or file tokens, read without
 * client-node; undefined for anything else, which client-node then handles in full.
 */
export async function simpleKubeconfig(file: string, contextName?: string): Promise<ClusterCredentials | undefined> {
  let doc: Fields;
  try {
    doc = ((await kubeconfigDocument(await readFile(file, 'utf8'))) ?? {}) as Fields;
  } catch {
    return undefined;
  }
  const name = contextName ?? (doc['current-context'] as string | undefined);
  if (contextName && !named(doc.contexts, contextName, 'context')) throw new Error(`kubeconfig: no context named "${contextName}"`);
  const context = named(doc.contexts, name, 'context');
  const cluster = named(doc.clusters, context?.cluster as string | undefined, 'cluster');
  const user = named(doc.users, context?.user as string | undefined, 'user') ?? {};
  if (!cluster || typeof cluster.server !== 'string') return undefined;
  if (Object.keys(cluster).some((k) => !CLUSTER_FIELDS.has(k)) || Object.keys(user).some((k) => !USER_FIELDS.has(k))) return undefined;
  const relative = (path: string) => (isAbsolute(path) ? path : join(dirname(file), path));
  const material = async (data: unknown, path: unknown): Promise<Buffer | undefined> =>
    typeof data === 'string' ? Buffer.from(data, 'base64') : typeof path === 'string' ? readFile(relative(path)) : undefined;
  const [ca, cert, key] = await Promise.all([
    material(cluster['certificate-authority-data'], cluster['certificate-authority']),
    material(user['client-certificate-data'], user['client-certificate']),
    material(user['client-key-data'], user['client-key']),
  ]);
  const server = cluster.server.replace(/\/+$/, '');
  return {
    getCurrentCluster: () => ({ server }),
    applyToHTTPSOptions: async (options) => {
      if (ca) options.ca = ca;
      if (cert) options.cert = cert;
      if (key) options.key = key;
      if (cluster['insecure-skip-tls-verify'] === true) options.rejectUnauthorized = false;
      if (typeof cluster['tls-server-name'] === 'string') options.servername = cluster['tls-server-name'];
      const token = typeof user.token === 'string' ? user.token : typeof user.tokenFile === 'string' ? (await readFile(relative(user.tokenFile), 'utf8')).trim() : undefined;
      if (token) options.headers = { ...options.headers, Authorization: `Bearer ${token}` };
    },
  };
}

/**
 * A kubeconfig file's document. A JSON one (which kubectl reads too) is parsed without loading yaml, whose load and
 * first parse cost a start ~35 ms of CPU: a router in a cluster reads its ServiceAccount and never loads it.
 */
export async function kubeconfigDocument(text: string): Promise<unknown> {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {
      // A YAML flow mapping that is not JSON: yaml reads it below.
    }
  }
  // yaml is CommonJS under Node: a bundle's import() of it has only a default export (esbuild), as Node's has too.
  const { parse } = (await import('yaml')).default;
  return parse(text);
}

async function clientNodeConfig(source: KubeConfigSource, inCluster: boolean): Promise<ClusterCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (source.kubeconfig) kc.loadFromFile(source.kubeconfig);
  else if (inCluster) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (source.context) {
    if (!kc.getContextObject(source.context)) throw new Error(`kubeconfig: no context named "${source.context}"`);
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) throw new Error('kubeconfig: no current cluster (set --kubeconfig or KUBECONFIG)');
  return kc;
}

/** The request headers of what applyToHTTPSOptions gave: its headers (lower-cased), basic auth as an Authorization header. */
export function credentialHeaders(opts: { headers?: Record<string, string>; auth?: string }): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) headers[key.toLowerCase()] = String(value);
  if (opts.auth && !headers.authorization) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return headers;
}
