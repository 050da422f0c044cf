// Webhook certificates against the real API server: one bundle however many replicas race to create or
// renew it, a caBundle that is put back when someone resets it, and rotation picked up by every replica;
// replicas merge caBundles when the Secret's CA is corrupt, and see a changed Secret through their watch;
// `kubeloop certs` injects into the Mutating- and the ValidatingWebhookConfiguration of one name.
import { execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  injectCaBundle,
  keepCaBundle,
  readWebhookConfiguration,
  WEBHOOK_CONFIGURATION_KINDS,
  type WebhookConfiguration,
  type WebhookConfigurationKind,
} from '../../certs/ca-bundle.ts';
import { generateBundle, type KeyPairPem } from '../../certs/generate.ts';
import { splitPemCertificates } from '../../certs/inspect.ts';
import { CertificateRotator } from '../../certs/rotation.ts';
import { bundleFromSecret, ensureCertificate, readCertificateSecret } from '../../certs/secret-store.ts';
import { KubeClient } from '../../lib/kube/index.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { buildWebhookConfiguration } from '../support/watcher-sidecar-webhook.ts';
import { applyWebhookConfiguration, deleteWebhookConfiguration } from '../support/webhook-configurations.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { proxiedKubeconfig } from '../soak/platform.ts';
import { startTcpProxy } from '../soak/tcp-proxy.ts';

const DAY = 24 * 60 * 60 * 1000;
const run = promisify(execFile);
const logger = createLogger({ name: 'certs-e2e', level: 'warn' });
let suite: ClusterSuite;
let clients: KubeClient[];
let configurationName: string;
const identity = { service: 'kubeloop-webhook', namespace: 'kubeloop' };

beforeAll(async () => {
  suite = await setupClusterSuite('webhook-certs');
  clients = await Promise.all(Array.from({ length: 5 }, () => KubeClient.fromKubeConfig(suite.kubeConfig)));
  configurationName = `kubeloop-certs-${suite.namespace}`;
  // Never called: it only sends pods of a namespace that does not exist.
  await applyWebhookConfiguration(
    clients[0]!,
    buildWebhookConfiguration({
      name: configurationName,
      target: { url: 'https://127.0.0.1:1/mutate/watcher-sidecar' },
      kubeloopNamespace: 'kubeloop',
      onlyNamespaces: [`${suite.namespace}-none`],
    }),
  );
});

afterAll(async () => {
  if (clients) {
    await deleteWebhookConfiguration(clients[0]!, configurationName);
    await Promise.all(clients.map((c) => c.close()));
  }
  await suite?.cleanup();
});

/** Back to a configuration without caBundle, as a fresh install has. */
async function resetConfiguration(): Promise<void> {
  await applyWebhookConfiguration(
    clients[2]!,
    buildWebhookConfiguration({ name: configurationName, target: { url: 'https://127.0.0.1:1/mutate/watcher-sidecar' }, kubeloopNamespace: 'kubeloop', onlyNamespaces: [`${suite.namespace}-none`] }),
  );
}

const caBundleCertificates = async (): Promise<string[]> => splitPemCertificates(Buffer.from((await caBundle()) ?? '', 'base64').toString('utf8'));

async function caBundle(): Promise<string | undefined> {
  const configuration = await clients[0]!.request<V1MutatingWebhookConfiguration>({
    path: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${configurationName}`,
  });
  return configuration.webhooks?.[0]?.clientConfig.caBundle;
}

describe('certificate Secret', () => {
  it('gives every one of five replicas starting at once the same certificate (one create wins, the rest adopt it)', async () => {
    const location = { namespace: suite.namespace, name: 'race-tls' };
    const results = await Promise.all(clients.map((client) => ensureCertificate(client, location, { identity, now: () => new Date() })));
    expect(results.filter((r) => r.action === 'created')).toHaveLength(1);
    const served = new Set(results.map((r) => r.bundle.serving.certPem));
    expect(served.size).toBe(1);
    const secret = await readCertificateSecret(clients[0]!, location);
    expect(secret?.type).toBe('kubernetes.io/tls');
    expect(bundleFromSecret(secret!).serving.certPem).toBe([...served][0]);
  });

  it('renews once when five replicas find the certificate due at the same time, keeping the CA', async () => {
    const location = { namespace: suite.namespace, name: 'renew-tls' };
    const first = await ensureCertificate(clients[0]!, location, { identity, now: () => new Date() });
    const later = () => new Date(Date.now() + 250 * DAY);
    const results = await Promise.all(clients.map((client) => ensureCertificate(client, location, { identity, now: later })));
    expect(results.filter((r) => r.action === 'renewed')).toHaveLength(1);
    expect(new Set(results.map((r) => r.bundle.serving.certPem)).size).toBe(1);
    expect(results[0]?.bundle.serving.certPem).not.toBe(first.bundle.serving.certPem);
    expect(results[0]?.bundle.ca).toEqual(first.bundle.ca);
    expect(results.find((r) => r.action === 'renewed')?.reasons).toEqual(['serving-expiring']);
  });

  it('replaces a Secret whose contents are not a usable bundle', async () => {
    const location = { namespace: suite.namespace, name: 'broken-tls' };
    await clients[0]!.request({
      method: 'POST',
      path: `/api/v1/namespaces/${suite.namespace}/secrets`,
      body: { metadata: { name: 'broken-tls' }, type: 'Opaque', data: { 'tls.crt': Buffer.from('garbage').toString('base64') } },
    });
    const result = await ensureCertificate(clients[0]!, location, { identity, now: () => new Date() });
    expect(result.action).toBe('renewed');
    expect(result.reasons).toContain('ca-unreadable');
  });
});

describe('caBundle', () => {
  it('is injected, and put back by the keeper after someone resets it', async () => {
    const { bundle } = await ensureCertificate(clients[0]!, { namespace: suite.namespace, name: 'keeper-tls' }, { identity, now: () => new Date() });
    const expected = Buffer.from(bundle.ca.certPem).toString('base64');
    const keeper = keepCaBundle(clients[1]!, configurationName, bundle.ca.certPem, logger);
    try {
      expect(await keeper.setCa(bundle.ca.certPem)).toMatch(/updated|unchanged/);
      expect(await caBundle()).toBe(expected);
      // A helm upgrade or kubectl apply without caBundle resets it.
      const reset = buildWebhookConfiguration({
        name: configurationName,
        target: { url: 'https://127.0.0.1:1/mutate/watcher-sidecar' },
        kubeloopNamespace: 'kubeloop',
        onlyNamespaces: [`${suite.namespace}-none`],
      });
      await applyWebhookConfiguration(clients[2]!, reset);
      await eventually('the keeper to re-inject the caBundle', async () => (await caBundle()) === expected);
      expect(await injectCaBundle(clients[3]!, configurationName, bundle.ca.certPem)).toBe('unchanged');
    } finally {
      await keeper.stop();
    }
  });
});

describe('CertificateRotator', () => {
  it('renews when due, hot-swaps, and a second replica adopts the renewed certificate at its next check', async () => {
    const secret = { namespace: suite.namespace, name: 'rotate-tls' };
    // One clock per replica: b's Secret watch may start a check of its own at any moment (a late event
    // re-checks), and on a clock jumped for a it would do a's CA roll first. b's clock stops at the renewal.
    let offsetDays = 0;
    let offsetDaysB = 0;
    const make = (client: KubeClient, days: () => number) =>
      new CertificateRotator({ client, secret, identity, configurationName, checkIntervalMs: 3_600_000, logger, now: () => new Date(Date.now() + days() * DAY) });
    const a = make(clients[0]!, () => offsetDays);
    const b = make(clients[1]!, () => offsetDaysB);
    await resetConfiguration();
    const swappedA: KeyPairPem[] = [];
    const swappedB: KeyPairPem[] = [];
    a.onServingChanged((s) => swappedA.push(s));
    b.onServingChanged((s) => swappedB.push(s));
    try {
      const [startA, startB] = await Promise.all([a.start(), b.start()]);
      expect(startA.serving.certPem).toBe(startB.serving.certPem);
      expect(await caBundle()).toBe(Buffer.from(startA.ca.certPem).toString('base64'));

      offsetDays = offsetDaysB = 10;
      expect((await a.check()).action).toBe('loaded');
      expect(swappedA).toEqual([]);

      offsetDays = offsetDaysB = 300;
      const renewed = await a.check();
      expect(renewed.action).toBe('renewed');
      expect(swappedA.map((s) => s.certPem)).toEqual([renewed.bundle.serving.certPem]);
      const adopted = await b.check();
      expect(adopted.action).toBe('loaded');
      expect(swappedB.map((s) => s.certPem)).toEqual([renewed.bundle.serving.certPem]);
      // Same CA: the caBundle did not have to change and old connections still verify.
      expect(renewed.bundle.ca).toEqual(startA.ca);

      // Twenty months on the (two-year) CA itself is due: a new CA goes into the caBundle next to the old one.
      offsetDays = 600;
      const rolled = await a.check();
      expect(rolled.reasons).toContain('ca-expiring');
      const trusted = splitPemCertificates(rolled.bundle.ca.certPem);
      expect(trusted).toHaveLength(2);
      expect(trusted[0]).not.toBe(splitPemCertificates(startA.ca.certPem)[0]);
      expect(trusted[1]).toBe(splitPemCertificates(startA.ca.certPem)[0]);
      expect(await caBundle()).toBe(Buffer.from(rolled.bundle.ca.certPem).toString('base64'));
      expect(swappedA.at(-1)?.certPem).toBe(rolled.bundle.serving.certPem);
      // Replica b has not checked yet and still holds only the old CA: its keeper must not put that back
      // (the new caBundle already trusts it), or a's new certificate would stop verifying.
      expect(await injectCaBundle(clients[4]!, configurationName, startA.ca.certPem)).toBe('unchanged');
      expect(await caBundle()).toBe(Buffer.from(rolled.bundle.ca.certPem).toString('base64'));
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe('replicas sharing a certificate Secret', () => {
  it('merge caBundles when the Secret CA is corrupt, and serve the new bundle through their watch', async () => {
    const secret = { namespace: suite.namespace, name: 'corrupt-tls' };
    // The periodic check is an hour away: anything picked up below came through the watch.
    const make = (client: KubeClient) => new CertificateRotator({ client, secret, identity, configurationName, checkIntervalMs: 3_600_000, logger });
    await resetConfiguration();
    const a = make(clients[0]!);
    const swappedA: KeyPairPem[] = [];
    a.onServingChanged((s) => swappedA.push(s));
    const b = make(clients[1]!);
    try {
      const first = await a.start();
      const [oldCa] = splitPemCertificates(first.ca.certPem);
      expect(await caBundleCertificates()).toEqual([oldCa]);

      // The CA in the Secret is corrupted (a bad edit, a restore gone wrong): the next replica to start
      // makes a new CA, while replica a still serves a certificate signed by the old one.
      const stored = (await readCertificateSecret(clients[2]!, secret))!;
      stored.data = { ...stored.data, 'ca.crt': Buffer.from('not a certificate').toString('base64') };
      await clients[2]!.request({ method: 'PUT', path: `/api/v1/namespaces/${secret.namespace}/secrets/${secret.name}`, body: stored });
      const second = await b.start();
      const [newCa] = splitPemCertificates(second.ca.certPem);
      expect(newCa).not.toBe(oldCa);

      // Both CAs are trusted, the new one first: b's injection kept a's, and a's keeper has no reason to
      // put its old CA back alone (which would make b's certificate fail, and b's keeper undo it, in turn).
      expect(await caBundleCertificates()).toEqual([newCa, oldCa]);
      // a picks the new bundle up from its watch, within seconds, without a check being called.
      await eventually('replica a to serve the new certificate', async () => swappedA.at(-1)?.certPem === second.serving.certPem);
      expect(a.bundle.ca.certPem).toBe(second.ca.certPem);
      expect(await caBundleCertificates()).toEqual([newCa, oldCa]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('serves a rotation made by kubeloop certs rotate --force elsewhere within seconds', async () => {
    const secret = { namespace: suite.namespace, name: 'watched-tls' };
    const a = new CertificateRotator({ client: clients[0]!, secret, identity, checkIntervalMs: 3_600_000, logger });
    const swapped: KeyPairPem[] = [];
    a.onServingChanged((s) => swapped.push(s));
    try {
      await a.start();
      const forced = await ensureCertificate(clients[3]!, secret, { identity, now: () => new Date(), force: true });
      expect(forced.action).toBe('renewed');
      await eventually('the watch to swap in the forced certificate', async () => swapped.at(-1)?.certPem === forced.bundle.serving.certPem);
    } finally {
      await a.stop();
    }
  });
});

describe('kubeloop certs', () => {
  const cli = (...args: string[]) =>
    run(process.execPath, ['cli/bin.js', 'certs', ...args, `--kubeconfig=${suite.kubeconfigPath}`, `--namespace=${suite.namespace}`, '--secret=cli-tls', `--configuration=${configurationName}`]);

  it('rotate creates the Secret and injects the CA; show reports it in sync; rotate --force renews under the same CA', async () => {
    const created = await cli('rotate');
    expect(created.stdout).toContain(`Secret ${suite.namespace}/cli-tls: created (missing)`);
    expect(created.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${configurationName}: updated`);
    expect(created.stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${configurationName}: absent`);
    const shown = await cli('show');
    expect(shown.stdout).toContain('SANs kubeloop-webhook, kubeloop-webhook.');
    expect(shown.stdout).toContain('renewal: not due');
    expect(shown.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${configurationName}: in sync with the Secret`);
    const before = bundleFromSecret((await readCertificateSecret(clients[0]!, { namespace: suite.namespace, name: 'cli-tls' }))!);
    const forced = await cli('rotate', '--force');
    expect(forced.stdout).toContain('renewed (forced)');
    expect(forced.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${configurationName}: unchanged`);
    const after = bundleFromSecret((await readCertificateSecret(clients[0]!, { namespace: suite.namespace, name: 'cli-tls' }))!);
    expect(after.ca).toEqual(before.ca);
    expect(after.serving.certPem).not.toBe(before.serving.certPem);
  });

  it('rotate --ca: a running replica serves the new CA\'s certificate, and its keeper leaves the old CA out of the caBundle after the overlap', async () => {
    const secret = { namespace: suite.namespace, name: 'cli-tls' };
    await resetConfiguration();
    // The names the CLI issues for (--namespace is the suite's): the replica has no reason to renew on its own.
    const replica = new CertificateRotator({ client: clients[1]!, secret, identity: { ...identity, namespace: suite.namespace }, configurationName, checkIntervalMs: 3_600_000, logger });
    try {
      const [oldCa] = splitPemCertificates((await replica.start()).ca.certPem);
      const rolled = await cli('rotate', '--ca', '--overlap-seconds=2');
      expect(rolled.stdout).toContain('previous CA removed');
      const [newCa, ...others] = splitPemCertificates(bundleFromSecret((await readCertificateSecret(clients[0]!, secret))!).ca.certPem);
      expect(others).toEqual([]);
      expect(newCa).not.toBe(oldCa);
      await eventually('the replica to hold the new CA alone and the caBundle to trust it alone', async () =>
        replica.bundle.ca.certPem === newCa && JSON.stringify(await caBundleCertificates()) === JSON.stringify([newCa]));
      // A periodic check re-injects nothing old.
      await replica.check();
      expect(await caBundleCertificates()).toEqual([newCa]);
    } finally {
      await replica.stop();
    }
  });

  it('rotate --force rides out an API server that refuses connections, then writes the Secret once it answers', async () => {
    // A pass-through proxy with no backend drops every connection, as a restarting API server does.
    let apiServerUp = false;
    const apiPort = Number(new URL(suite.server).port);
    const proxy = await startTcpProxy(() => (apiServerUp ? [{ host: '127.0.0.1', port: apiPort }] : []));
    try {
      const kubeconfig = await proxiedKubeconfig(suite.kubeconfigPath, proxy.port, join(await mkdtemp(join(tmpdir(), 'certs-retry-')), 'kubeconfig'));
      const child = spawn(process.execPath, ['cli/bin.js', 'certs', 'rotate', '--force', `--kubeconfig=${kubeconfig}`, `--namespace=${suite.namespace}`, '--secret=retry-tls', `--configuration=${configurationName}`]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      // The API server comes back only after the command has met it down and said it retries.
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes('retrying in')) apiServerUp = true;
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).toMatch(/certs rotate: .*; retrying in \d+ ms/);
      expect(stdout).toContain(`Secret ${suite.namespace}/retry-tls: created (missing)`);
      expect(stdout).toContain(`caBundle of MutatingWebhookConfiguration ${configurationName}: `);
      expect(code).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  describe('on the Mutating- and ValidatingWebhookConfiguration of one name (the gateway hook configurations)', () => {
    let hooks: string;
    const hooksCli = (...args: string[]) =>
      run(process.execPath, ['cli/bin.js', 'certs', ...args, `--kubeconfig=${suite.kubeconfigPath}`, `--namespace=${suite.namespace}`, '--secret=hooks-tls', `--configuration=${hooks}`]);
    /** Exit code and stdout, for the runs expected to fail. */
    const hooksCliStatus = (...args: string[]) =>
      hooksCli(...args).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
      );
    /** A configuration of the kind that never calls anyone (it sends a namespace that does not exist). */
    const configurationOf = (kind: WebhookConfigurationKind, caBundlePem?: string): WebhookConfiguration => {
      const built = buildWebhookConfiguration({
        name: hooks,
        target: { url: 'https://127.0.0.1:1/admit/none' },
        kubeloopNamespace: 'kubeloop',
        onlyNamespaces: [`${suite.namespace}-none`],
        ...(caBundlePem ? { caBundlePem } : {}),
      });
      if (kind === 'MutatingWebhookConfiguration') return built;
      // reinvocationPolicy is the mutating kind's only.
      return { ...built, kind, webhooks: built.webhooks!.map(({ reinvocationPolicy: _, ...w }) => w) };
    };
    const caBundleOf = async (kind: WebhookConfigurationKind): Promise<string[]> => {
      const configuration = await readWebhookConfiguration(clients[0]!, { kind, name: hooks });
      return splitPemCertificates(Buffer.from(configuration?.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
    };
    /** The Secret's serving certificate verifies against a CA of the configuration's caBundle: the API server would trust it. */
    const trustsSecret = async (kind: WebhookConfigurationKind): Promise<boolean> => {
      const bundle = bundleFromSecret((await readCertificateSecret(clients[0]!, { namespace: suite.namespace, name: 'hooks-tls' }))!);
      const serving = new X509Certificate(bundle.serving.certPem);
      return (await caBundleOf(kind)).some((ca) => serving.verify(new X509Certificate(ca).publicKey));
    };

    beforeAll(() => {
      hooks = `kubeloop-hooks-${suite.namespace}`;
    });
    afterAll(async () => {
      for (const kind of WEBHOOK_CONFIGURATION_KINDS) await deleteWebhookConfiguration(clients[0]!, { kind, name: hooks });
    });

    it('rotate and inject put the CA into both caBundles, keeping a CA that was already trusted there', async () => {
      const foreign = (await generateBundle({ now: new Date(), identity })).ca.certPem;
      await applyWebhookConfiguration(clients[0]!, configurationOf('MutatingWebhookConfiguration'));
      await applyWebhookConfiguration(clients[0]!, configurationOf('ValidatingWebhookConfiguration', foreign));

      const rotated = await hooksCli('rotate');
      expect(rotated.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${hooks}: updated`);
      expect(rotated.stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${hooks}: updated`);
      for (const kind of WEBHOOK_CONFIGURATION_KINDS) expect(await trustsSecret(kind), kind).toBe(true);
      expect(await caBundleOf('ValidatingWebhookConfiguration')).toContain(splitPemCertificates(foreign)[0]);
      const shown = await hooksCli('show');
      for (const kind of WEBHOOK_CONFIGURATION_KINDS) expect(shown.stdout).toContain(`caBundle of ${kind} ${hooks}: in sync with the Secret`);

      // A Helm upgrade resets both; inject puts the Secret's CA back.
      for (const kind of WEBHOOK_CONFIGURATION_KINDS) await applyWebhookConfiguration(clients[0]!, configurationOf(kind));
      expect((await hooksCli('show')).stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${hooks}: DIFFERS from the Secret`);
      const injected = await hooksCliStatus('inject');
      expect(injected).toEqual({ code: 0, stdout: expect.stringContaining(`caBundle of ValidatingWebhookConfiguration ${hooks}: updated`) });
      for (const kind of WEBHOOK_CONFIGURATION_KINDS) expect(await trustsSecret(kind), kind).toBe(true);
    });

    it('works on the one kind present (validating hooks only), and inject fails with not-found only when neither exists', async () => {
      await deleteWebhookConfiguration(clients[0]!, { kind: 'MutatingWebhookConfiguration', name: hooks });
      await applyWebhookConfiguration(clients[0]!, configurationOf('ValidatingWebhookConfiguration'));

      // No --configuration: the default, here from KUBELOOP_HOOK_CONFIGURATION as the webhook reads it.
      const rotated = await run(
        process.execPath,
        ['cli/bin.js', 'certs', 'rotate', '--force', `--kubeconfig=${suite.kubeconfigPath}`, `--namespace=${suite.namespace}`, '--secret=hooks-tls'],
        { env: { ...process.env, KUBELOOP_HOOK_CONFIGURATION: hooks } },
      );
      expect(rotated.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${hooks}: absent (none of this kind)`);
      expect(rotated.stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${hooks}: updated`);
      expect(await trustsSecret('ValidatingWebhookConfiguration')).toBe(true);
      expect(await readWebhookConfiguration(clients[0]!, { kind: 'MutatingWebhookConfiguration', name: hooks })).toBeUndefined();
      const shown = await hooksCli('show');
      expect(shown.stdout).toContain(`caBundle of MutatingWebhookConfiguration ${hooks}: absent`);
      expect(shown.stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${hooks}: in sync with the Secret`);

      await applyWebhookConfiguration(clients[0]!, configurationOf('ValidatingWebhookConfiguration'));
      const injected = await hooksCliStatus('inject');
      expect(injected.code).toBe(0);
      expect(injected.stdout).toContain(`caBundle of ValidatingWebhookConfiguration ${hooks}: updated`);
      expect(await trustsSecret('ValidatingWebhookConfiguration')).toBe(true);

      await deleteWebhookConfiguration(clients[0]!, { kind: 'ValidatingWebhookConfiguration', name: hooks });
      const neither = await hooksCliStatus('inject');
      expect(neither.code).toBe(1);
      expect(neither.stdout).toContain(`caBundle of ${hooks}: not-found (neither a MutatingWebhookConfiguration nor a ValidatingWebhookConfiguration named ${hooks})`);
    });
  });
});
