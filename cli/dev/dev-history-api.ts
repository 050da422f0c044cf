// `kubeloop history` against `kubeloop dev`: on its own control plane the router serves the history API with a
// serving certificate dev issues, and dev registers it as the chart's router.historyApi does (APIService
// v1alpha1.history.kubeloop.dev), led to the local router by an ExternalName Service (no kube-proxy here).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { HISTORY_GROUP, HISTORY_VERSION } from '../../router/history/history-documents.ts';
import { freePort } from '../cluster/free-port.ts';
import { createCertificateAuthority, issueCertificate } from '../cluster/pki.ts';
import { applyManifest, ensureNamespace, type Manifest } from './apply-manifests.ts';

export const DEV_HISTORY_SERVICE = 'kubeloop-history';
const APISERVICE_NAME = `${HISTORY_VERSION}.${HISTORY_GROUP}`;

export interface DevHistoryApi {
  port: number;
  /** The router's flags that serve it. */
  routerArgs: string[];
  /** PEM of the CA that signed the serving certificate: the APIService's caBundle. */
  caPem: string;
}

/** A serving certificate for the Service the aggregator calls (<service>.<namespace>.svc), in dir, and a free port. */
export async function prepareDevHistoryApi(dir: string, namespace: string): Promise<DevHistoryApi> {
  const ca = await createCertificateAuthority('kubeloop-dev-history-ca');
  const serving = await issueCertificate(ca, { commonName: DEV_HISTORY_SERVICE, usage: 'server', hosts: [`${DEV_HISTORY_SERVICE}.${namespace}.svc`] });
  const tlsDir = join(dir, 'history-api');
  await mkdir(tlsDir, { recursive: true, mode: 0o700 });
  const certFile = join(tlsDir, 'tls.crt');
  const keyFile = join(tlsDir, 'tls.key');
  await writeFile(certFile, serving.certPem, { mode: 0o600 });
  await writeFile(keyFile, serving.keyPem, { mode: 0o600 });
  const port = await freePort();
  return { port, caPem: ca.certPem, routerArgs: [`--history-api-port=${port}`, `--history-tls-cert-file=${certFile}`, `--history-tls-key-file=${keyFile}`] };
}

/** The Service and APIService that lead the API server's aggregator to the local router's history port. */
export function devHistoryManifests(api: Pick<DevHistoryApi, 'port' | 'caPem'>, namespace: string): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: DEV_HISTORY_SERVICE, namespace }, spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port: api.port }] } },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: APISERVICE_NAME },
      spec: {
        group: HISTORY_GROUP,
        version: HISTORY_VERSION,
        service: { namespace, name: DEV_HISTORY_SERVICE, port: api.port },
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
  const deadline = Date.now() + timeoutMs;
  let last = 'no status yet';
  while (!signal.aborted && Date.now() < deadline) {
    const live = await client.request<{ status?: { conditions?: Array<{ type: string; status: string; message?: string }> } }>({ path: `/apis/apiregistration.k8s.io/v1/apiservices/${APISERVICE_NAME}` });
    const available = live.status?.conditions?.find((c) => c.type === 'Available');
    if (available?.status === 'True') return undefined;
    last = available?.message ?? last;
    await sleep(500, undefined, { signal }).catch(() => {});
  }
  return signal.aborted ? undefined : `APIService ${APISERVICE_NAME} not Available within ${timeoutMs / 1000} s (${last})`;
}
