// `kubeloop certs generate|inject|rotate|show`: the webhook's certificates for operators.
// generate works offline (files); inject, rotate and show work on the Secret and the caBundle of the
// Mutating- and ValidatingWebhookConfiguration (the gateway's hook configurations unless --configuration).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { combineInjectResults, injectCaBundle, injectCaBundles, needsCaBundle, replaceCaBundle, readWebhookConfiguration, WEBHOOK_CONFIGURATION_KINDS, type InjectResult, type WebhookConfigurationKind } from '../../certs/ca-bundle.ts';
import { generateBundle, type CertificateBundle, type ServingIdentity } from '../../certs/generate.ts';
import { decideRenewal, inspectCertificate, splitPemCertificates } from '../../certs/inspect.ts';
import { bundleFromSecret, ensureCertificate, readCertificateSecret } from '../../certs/secret-store.ts';
import { KubeClient, loadKubeConfig, retryTransient } from '../../lib/kube/index.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from '../../webhooks/index.ts';
import { UsageError } from '../command-args.ts';
import { CERTS_ACTIONS, DEFAULT_NAMESPACE } from '../command-list.ts';
import { describeInjection, describeSync, type CaBundleSync } from './certs-report.ts';
import { rotateCa } from './certs-ca-roll.ts';

const USAGE = `usage: kubeloop certs <generate|inject|rotate|show> [options]

  generate --out DIR [--service S] [--namespace N] [--host H]...   write ca.crt, ca.key, tls.crt, tls.key (offline)
  inject   [--ca-file PATH]                                      add the CA (from --ca-file or the Secret) to the configurations' caBundle
  rotate   [--force]                                             renew the Secret's serving certificate if due (always with --force);
                                                                 running webhooks swap it in through their watch of the Secret
  rotate   --ca [--overlap-seconds 120]                          replace the CA (a key that may have leaked): a new CA and serving
                                                                 certificate, both CAs trusted for the overlap, then the old CA
                                                                 removed from the Secret and the caBundles
  rotate   --drop-previous-ca                                    remove CAs other than the signing one now (a --ca roll cut short)
  show     [--cert-file PATH]                                    subject, SANs, expiry and renewal decision; caBundle status

common: --kubeconfig PATH  --namespace ${DEFAULT_NAMESPACE}  --service kubeloop-webhook  --secret kubeloop-webhook-tls
        --configuration ${DEFAULT_HOOK_CONFIGURATION_NAME}   (KUBELOOP_HOOK_CONFIGURATION) the Mutating- and the ValidatingWebhookConfiguration
                             of this name, either may be absent; default: the gateway's hook configurations, which the
                             chart names <fullname>-admission-hooks (its NOTES print the command for the release)
        --retry-seconds 60   keep trying this long while the API server is unreachable, restarting or throttling`;

function describeBundle(bundle: CertificateBundle, identity: ServingIdentity): string {
  const lines: string[] = [];
  for (const [index, pem] of splitPemCertificates(bundle.ca.certPem).entries()) {
    const ca = inspectCertificate(pem);
    lines.push(`CA${index === 0 ? '' : ` (previous, still trusted)`}: ${ca.subject}  notAfter ${ca.notAfter.toISOString()}  sha256 ${ca.fingerprintSha256}`);
  }
  const serving = inspectCertificate(bundle.serving.certPem);
  lines.push(`serving: ${serving.subject}  issuer ${serving.issuer}`);
  lines.push(`  notBefore ${serving.notBefore.toISOString()}  notAfter ${serving.notAfter.toISOString()}  serial ${serving.serialNumber}`);
  lines.push(`  SANs ${serving.hosts.join(', ')}`);
  const decision = decideRenewal(bundle, identity, new Date());
  lines.push(`  renewal: ${decision.renewServing ? `due (${decision.reasons.join(', ')})` : 'not due'}`);
  return lines.join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (!action || action === '--help' || action === '-h' || rest.includes('--help')) {
    console.log(USAGE);
    return action ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', default: process.env.KUBELOOP_NAMESPACE || DEFAULT_NAMESPACE },
      service: { type: 'string', default: 'kubeloop-webhook' },
      secret: { type: 'string', default: 'kubeloop-webhook-tls' },
      configuration: { type: 'string', default: process.env.KUBELOOP_HOOK_CONFIGURATION || DEFAULT_HOOK_CONFIGURATION_NAME },
      out: { type: 'string' },
      host: { type: 'string', multiple: true },
      'ca-file': { type: 'string' },
      'cert-file': { type: 'string' },
      'retry-seconds': { type: 'string', default: '60' },
      force: { type: 'boolean', default: false },
      ca: { type: 'boolean', default: false },
      'overlap-seconds': { type: 'string', default: '120' },
      'drop-previous-ca': { type: 'boolean', default: false },
    },
  });
  const identity: ServingIdentity = { service: values.service, namespace: values.namespace, extraHosts: values.host ?? [] };
  const location = { namespace: values.namespace, name: values.secret };

  if (action === 'generate') {
    if (!values.out) throw new UsageError('generate: --out DIR is required');
    const bundle = await generateBundle({ now: new Date(), identity });
    await mkdir(values.out, { recursive: true });
    await writeFile(join(values.out, 'ca.crt'), bundle.ca.certPem);
    await writeFile(join(values.out, 'ca.key'), bundle.ca.keyPem, { mode: 0o600 });
    await writeFile(join(values.out, 'tls.crt'), bundle.serving.certPem);
    await writeFile(join(values.out, 'tls.key'), bundle.serving.keyPem, { mode: 0o600 });
    console.log(`wrote ca.crt, ca.key, tls.crt, tls.key to ${values.out}\n${describeBundle(bundle, identity)}`);
    return 0;
  }
  if (action === 'show' && values['cert-file']) {
    const info = inspectCertificate(await readFile(values['cert-file'], 'utf8'));
    console.log(JSON.stringify(info, null, 2));
    return 0;
  }
  if (!['inject', 'rotate', 'show'].includes(action)) throw new UsageError(`unknown action "${action}"; want one of ${CERTS_ACTIONS.join(', ')}\n\n${USAGE}`);

  const retrySeconds = Number(values['retry-seconds']);
  if (!Number.isFinite(retrySeconds) || retrySeconds < 0) throw new UsageError(`--retry-seconds must be a number of seconds, got "${values['retry-seconds']}"`);
  // Every step below reads, then writes with the resourceVersion it read, so running it again is safe.
  const retrying = <T>(operation: () => Promise<T>): Promise<T> =>
    retryTransient(operation, {
      timeoutMs: retrySeconds * 1000,
      onRetry: (error, delayMs) => console.error(`certs ${action}: ${error instanceof Error ? error.message : String(error)}; retrying in ${delayMs} ms`),
    });
  const client = await KubeClient.fromKubeConfig(await loadKubeConfig(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}));
  const name = values.configuration;
  // Each kind retried on its own: a transient failure on the second does not redo the first.
  const inject = async (caPem: string): Promise<Record<WebhookConfigurationKind, InjectResult>> => {
    const results = await injectCaBundles(name, (ref) => retrying(() => injectCaBundle(client, ref, caPem)));
    for (const line of describeInjection(name, results)) console.log(line);
    return results;
  };
  try {
    if (action === 'rotate' && (values.ca || values['drop-previous-ca'])) {
      const overlapSeconds = Number(values['overlap-seconds']);
      if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0) throw new UsageError(`--overlap-seconds must be a whole number of seconds, got "${values['overlap-seconds']}"`);
      return await rotateCa(client, location, identity, { roll: values.ca, overlapSeconds, retrying, caBundles: (caPem) => injectCaBundles(name, (ref) => retrying(() => replaceCaBundle(client, ref, caPem))), name });
    }
    if (action === 'rotate') {
      const result = await retrying(() => ensureCertificate(client, location, { identity, now: () => new Date(), force: values.force }));
      console.log(`Secret ${location.namespace}/${location.name}: ${result.action}${result.reasons.length ? ` (${result.reasons.join(', ')})` : ''}`);
      console.log(describeBundle(result.bundle, identity));
      await inject(result.bundle.ca.certPem);
      return 0;
    }
    const secret = await retrying(() => readCertificateSecret(client, location));
    if (action === 'inject') {
      const caPem = values['ca-file'] ? await readFile(values['ca-file'], 'utf8') : secret ? bundleFromSecret(secret).ca.certPem : undefined;
      if (!caPem) throw new Error(`certs inject: no --ca-file and no Secret ${location.namespace}/${location.name}`);
      const results = await inject(caPem);
      return combineInjectResults(Object.values(results)) === 'not-found' ? 1 : 0;
    }
    if (!secret) {
      console.log(`Secret ${location.namespace}/${location.name} does not exist (the webhook creates it at start-up)`);
      return 1;
    }
    const bundle = bundleFromSecret(secret);
    console.log(`Secret ${location.namespace}/${location.name} (resourceVersion ${secret.metadata?.resourceVersion ?? '?'})`);
    console.log(describeBundle(bundle, identity));
    const states = {} as Record<WebhookConfigurationKind, CaBundleSync>;
    for (const kind of WEBHOOK_CONFIGURATION_KINDS) {
      const configuration = await retrying(() => readWebhookConfiguration(client, { kind, name }));
      // In sync when it trusts every CA of the Secret; replicas keep other still-valid CAs next to them.
      states[kind] = !configuration ? 'absent' : needsCaBundle(configuration, bundle.ca.certPem) ? 'differs' : 'in-sync';
    }
    for (const line of describeSync(name, states)) console.log(line);
    return 0;
  } finally {
    await client.close();
  }
}
