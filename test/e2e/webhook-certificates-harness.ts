// The set-up webhook-certificates.test.ts and webhook-certificates-cli.test.ts share (one suite per file: the state is
// this module's, and vitest gives each file its own):
// five API clients racing as replicas would, a webhook configuration that never calls anyone (it sends only a
// namespace that does not exist) whose caBundle the tests read, and `kubeloop certs` run against the suite.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { readWebhookConfiguration, WEBHOOK_CONFIGURATION_KINDS, type WebhookConfiguration, type WebhookConfigurationKind } from '../../certs/ca-bundle.ts';
import { splitPemCertificates } from '../../certs/inspect.ts';
import { bundleFromSecret, readCertificateSecret } from '../../certs/secret-store.ts';
import { KubeClient } from '../../lib/kube/index.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { buildWebhookConfiguration } from '../support/watcher-sidecar-webhook.ts';
import { applyWebhookConfiguration, deleteWebhookConfiguration } from '../support/webhook-configurations.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

const run = promisify(execFile);
/** The Service the certificates are issued for. */
export const identity = { service: 'kubeloop-webhook', namespace: 'kubeloop' };
export const logger = createLogger({ name: 'certs-e2e', level: 'warn' });
let suite: ClusterSuite;
let clients: KubeClient[];
let configurationName: string;
/** The gateway's hook configurations: a Mutating- and a ValidatingWebhookConfiguration of this one name. */
let hooks: string;

export interface CertificatesSuite {
  suite: ClusterSuite;
  /** Five clients of their own, one per simulated replica. */
  clients: KubeClient[];
  /** The never-called MutatingWebhookConfiguration the rotators keep the caBundle of. */
  configurationName: string;
  hooks: string;
}

/** A configuration named `name` that never calls anyone: it sends only pods of a namespace that does not exist. */
function neverCalled(name: string, path: string, caBundlePem?: string): V1MutatingWebhookConfiguration {
  return buildWebhookConfiguration({
    name,
    target: { url: `https://127.0.0.1:1${path}` },
    kubeloopNamespace: 'kubeloop',
    onlyNamespaces: [`${suite.namespace}-none`],
    ...(caBundlePem ? { caBundlePem } : {}),
  });
}

export async function startCertificatesSuite(): Promise<CertificatesSuite> {
  suite = await setupClusterSuite('webhook-certs');
  clients = await Promise.all(Array.from({ length: 5 }, () => KubeClient.fromKubeConfig(suite.kubeConfig)));
  configurationName = `kubeloop-certs-${suite.namespace}`;
  hooks = `kubeloop-hooks-${suite.namespace}`;
  await applyWebhookConfiguration(clients[0]!, neverCalled(configurationName, '/mutate/watcher-sidecar'));
  return { suite, clients, configurationName, hooks };
}

export async function stopCertificatesSuite(): Promise<void> {
  if (clients) {
    await deleteWebhookConfiguration(clients[0]!, configurationName);
    for (const kind of WEBHOOK_CONFIGURATION_KINDS) await deleteWebhookConfiguration(clients[0]!, { kind, name: hooks });
    await Promise.all(clients.map((c) => c.close()));
  }
  await suite?.cleanup();
}

/** Back to a configuration without caBundle, as a fresh install (or a helm upgrade, a kubectl apply) has. */
export async function resetConfiguration(): Promise<void> {
  await applyWebhookConfiguration(clients[2]!, neverCalled(configurationName, '/mutate/watcher-sidecar'));
}

export async function caBundle(): Promise<string | undefined> {
  const configuration = await clients[0]!.request<V1MutatingWebhookConfiguration>({
    path: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${configurationName}`,
  });
  return configuration.webhooks?.[0]?.clientConfig.caBundle;
}

export const caBundleCertificates = async (): Promise<string[]> => splitPemCertificates(Buffer.from((await caBundle()) ?? '', 'base64').toString('utf8'));

/** `kubeloop certs <args>` on the suite's namespace, the Secret and the configuration named. */
export const certsCli = (secret: string, configuration: string, ...args: string[]) =>
  run(process.execPath, ['cli/bin.js', 'certs', ...args, `--kubeconfig=${suite.kubeconfigPath}`, `--namespace=${suite.namespace}`, `--secret=${secret}`, `--configuration=${configuration}`]);

/** `kubeloop certs` on the hook configurations and Secret hooks-tls. */
export const hooksCli = (...args: string[]) => certsCli('hooks-tls', hooks, ...args);

/** Exit code and stdout, for the runs expected to fail. */
export const hooksCliStatus = (...args: string[]) =>
  hooksCli(...args).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
  );

/** A hook configuration of the kind that never calls anyone (it sends a namespace that does not exist). */
export const configurationOf = (kind: WebhookConfigurationKind, caBundlePem?: string): WebhookConfiguration => {
  const built = neverCalled(hooks, '/admit/none', caBundlePem);
  if (kind === 'MutatingWebhookConfiguration') return built;
  // reinvocationPolicy is the mutating kind's only.
  return { ...built, kind, webhooks: built.webhooks!.map(({ reinvocationPolicy: _, ...w }) => w) };
};

export const caBundleOf = async (kind: WebhookConfigurationKind): Promise<string[]> => {
  const configuration = await readWebhookConfiguration(clients[0]!, { kind, name: hooks });
  return splitPemCertificates(Buffer.from(configuration?.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
};

/** The Secret's serving certificate verifies against a CA of the configuration's caBundle: the API server would trust it. */
export const trustsSecret = async (kind: WebhookConfigurationKind): Promise<boolean> => {
  const bundle = bundleFromSecret((await readCertificateSecret(clients[0]!, { namespace: suite.namespace, name: 'hooks-tls' }))!);
  const serving = new X509Certificate(bundle.serving.certPem);
  return (await caBundleOf(kind)).some((ca) => serving.verify(new X509Certificate(ca).publicKey));
};
