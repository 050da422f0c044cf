// Writes kubeconfig files with the CA and client certificate embedded, one per control-plane identity.
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { CertKeyPem } from './pki.ts';

const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

/** `namespace`: the context's default namespace (a tenant's kubeconfig on kubeloop dev names its own). */
export function kubeconfigYaml(server: string, caPem: string, user: string, client: CertKeyPem, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kubeloop', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) } }],
    contexts: [{ name: 'kubeloop', context: { cluster: 'kubeloop', user, namespace } }],
    'current-context': 'kubeloop',
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, server: string, caPem: string, user: string, client: CertKeyPem, namespace?: string): Promise<void> {
  await writeFile(path, kubeconfigYaml(server, caPem, user, client, namespace), { mode: 0o600 });
}
