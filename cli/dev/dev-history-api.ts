// `kubeloop history` against `kubeloop dev`: on its own control plane the router serves the history API with a
// serving certificate dev issues, and dev registers it as the chart's router.historyApi does (APIService
// v1alpha1.history.kubeloop.dev), led to the local router by an ExternalName Service (no kube-proxy here).
// The gateway's admission history (v1alpha1.admissions.kubeloop.dev) is registered the same way.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { HISTORY_GROUP, HISTORY_VERSION } from '../../router/index.ts';
import { ADMISSIONS_GROUP, ADMISSIONS_VERSION } from '../../webhooks/index.ts';
import { freePort } from '../cluster/free-port.ts';
import { createCertificateAuthority, issueCertificate } from '../cluster/pki.ts';
import { applyManifest, ensureNamespace, type Manifest } from './apply-manifests.ts';

export const DEV_HISTORY_SERVICE = 'kubeloop-history';

/** Which aggregated API: its group and version, the Service the aggregator is led through, the serving process's flag prefix. */
export interface AggregatedApiKind {
  group: string;
  version: string;
  service: string;
  flagPrefix: string;
}
export const ROUTER_HISTORY: AggregatedApiKind = { group: HISTORY_GROUP, version: HISTORY_VERSION, service: DEV_HISTORY_SERVICE, flagPrefix: 'history' };
export const GATEWAY_ADMISSIONS: AggregatedApiKind = { group: ADMISSIONS_GROUP, version: ADMISSIONS_VERSION, service: 'kubeloop-admissions', flagPrefix: 'admission-history' };
const apiServiceName = (kind: AggregatedApiKind) => `${kind.version}.${kind.group}`;

export interface DevHistoryApi {
  kind?: AggregatedApiKind;
  port: number;
  /** The serving process's flags (the router's, or the gateway's for GATEWAY_ADMISSIONS). */
  serverArgs: string[];
  /** PEM of the CA that signed the serving certificate: the APIService's caBundle. */
  caPem: string;
}

/** A serving certificate for the Service the aggregator calls (<service>.<namespace>.svc), in dir, and a free port. */
export async function prepareDevHistoryApi(dir: string, namespace: string, kind = ROUTER_HISTORY): Promise<DevHistoryApi> {
  const ca = await createCertificateAuthority(`kubeloop-dev-${kind.flagPrefix}-ca`);
  const serving = await issueCertificate(ca, { commonName: kind.service, usage: 'server', hosts: [`${kind.service}.${namespace}.svc`] });
  const tlsDir = join(dir, `${kind.flagPrefix}-api`);
  await mkdir(tlsDir, { recursive: true, mode: 0o700 });
  const certFile = join(tlsDir, 'tls.crt');
  const keyFile = join(tlsDir, 'tls.key');
  await writeFile(certFile, serving.certPem, { mode: 0o600 });
  await writeFile(keyFile, serving.keyPem, { mode: 0o600 });
  const port = await freePort();
  const flag = kind.flagPrefix;
  return { kind, port, caPem: ca.certPem, serverArgs: [`--${flag}-api-port=${port}`, `--${flag}-tls-cert-file=${certFile}`, `--${flag}-tls-key-file=${keyFile}`] };
}

/** The Service and APIService that lead the API server's aggregator to the local router's history port (or the gateway's). */
export function devHistoryManifests(api: Pick<DevHistoryApi, 'port' | 'caPem' | 'kind'>, namespace: string): Manifest[] {
  const kind = api.kind ?? ROUTER_HISTORY;
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: kind.service, namespace }, spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port: api.port }] } },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: apiServiceName(kind) },
      spec: {
        group: kind.group,
        version: kind.version,
        service: { namespace, name: kind.service, port: api.port },
        caBundle: Buffer.from(api.caPem).toString('base64'),
        groupPriorityMinimum: 1000,
        versionPriority: 10,
      },
    },
  ];
}

/**
 * Registers the API and waits until the aggregator reaches the router (APIService Available); the problem as
 * a sentence when it does not within the timeout: dev runs on without `kubeloop history`, it does not fail.
 */
export async function registerDevHistoryApi(client: KubeClient, discovery: ResourceDiscovery, api: DevHistoryApi, namespace: string, signal: AbortSignal, timeoutMs = 60_000): Promise<string | undefined> {
  await ensureNamespace(client, discovery, namespace);
  for (const manifest of devHistoryManifests(api, namespace)) await applyManifest(client, discovery, manifest);
  const name = apiServiceName(api.kind ?? ROUTER_HISTORY);
  const deadline = Date.now() + timeoutMs;
  let last = 'no status yet';
  while (!signal.aborted && Date.now() < deadline) {
    const live = await client.request<{ status?: { conditions?: Array<{ type: string; status: string; message?: string }> } }>({ path: `/apis/apiregistration.k8s.io/v1/apiservices/${name}` });
    const available = live.status?.conditions?.find((c) => c.type === 'Available');
    if (available?.status === 'True') return undefined;
    last = available?.message ?? last;
    await sleep(500, undefined, { signal }).catch(() => {});
  }
  return signal.aborted ? undefined : `APIService ${name} not Available within ${timeoutMs / 1000} s (${last})`;
}
