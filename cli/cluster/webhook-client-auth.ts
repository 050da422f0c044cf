// How the local API server authenticates to admission webhooks (the Kubernetes "authenticate apiservers"
// recipe): an AdmissionConfiguration whose webhook plugins read a kubeconfig that gives every webhook host
// ('*') the API server's webhook client certificate, signed by the cluster CA. A gateway started with
// `--client-ca-file <pki>/ca.crt --client-name kube-apiserver-webhook-client` then accepts only this API server.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { API_SERVER_WEBHOOK_CLIENT_NAME } from '../../webhooks/index.ts';
import type { CertKeyPem } from './pki.ts';

export { API_SERVER_WEBHOOK_CLIENT_NAME };

const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

/** The kube-apiserver flag, and the files it names, written into the plane's directory. */
export async function writeWebhookClientAuth(dir: string, client: CertKeyPem): Promise<string[]> {
  const kubeconfig = join(dir, 'webhook-client.kubeconfig');
  const admission = join(dir, 'admission-config.yaml');
  const webhookConfiguration = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig };
  await Promise.all([
    // '*' is the default match: every webhook URL and Service gets the certificate; one that asks for none ignores it.
    writeFile(kubeconfig, stringify({ apiVersion: 'v1', kind: 'Config', users: [{ name: '*', user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) } }] }), { mode: 0o600 }),
    writeFile(
      admission,
      stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'].map((name) => ({ name, configuration: webhookConfiguration })),
      }),
    ),
  ]);
  return [`--admission-control-config-file=${admission}`];
}

/** What a gateway on this machine passes to accept this plane's API server only (`kubeloop dev`, the e2e harness). */
export function gatewayClientAuthArgs(planeDir: string): string[] {
  return [`--client-ca-file=${join(planeDir, 'pki', 'ca.crt')}`, `--client-name=${API_SERVER_WEBHOOK_CLIENT_NAME}`];
}
