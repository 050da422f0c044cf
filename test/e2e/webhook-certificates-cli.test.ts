// `kubeloop certs` against the real API server: rotate, show and inject on the webhook configuration and its
// Secret (a running replica picking up a CA rotation, retries while the API server refuses connections), and on
// the Mutating- and the ValidatingWebhookConfiguration of one name (the gateway's hook configurations).
// The set-up is webhook-certificates-harness.ts, shared with webhook-certificates.test.ts.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWebhookConfiguration, WEBHOOK_CONFIGURATION_KINDS } from '../../certs/ca-bundle.ts';
import { generateBundle } from '../../certs/generate.ts';
import { splitPemCertificates } from '../../certs/inspect.ts';
import { CertificateRotator } from '../../certs/rotation.ts';
import { bundleFromSecret, readCertificateSecret } from '../../certs/secret-store.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { applyWebhookConfiguration, deleteWebhookConfiguration } from '../support/webhook-configurations.ts';
import { eventually } from '../cluster/eventually.ts';
import type { ClusterSuite } from '../cluster/suite.ts';
import { proxiedKubeconfig } from '../soak/platform.ts';
import { startTcpProxy } from '../soak/tcp-proxy.ts';
import {
  caBundleCertificates,
  caBundleOf,
  certsCli,
  configurationOf,
  hooksCli,
  hooksCliStatus,
  identity,
  logger,
  resetConfiguration,
  startCertificatesSuite,
  stopCertificatesSuite,
  trustsSecret,
} from './webhook-certificates-harness.ts';

const run = promisify(execFile);
let suite: ClusterSuite;
let clients: KubeClient[];
let configurationName: string;
let hooks: string;

beforeAll(async () => {
  ({ suite, clients, configurationName, hooks } = await startCertificatesSuite());
});

afterAll(stopCertificatesSuite);

describe('kubeloop certs', () => {
  const cli = (...args: string[]) => certsCli('cli-tls', configurationName, ...args);

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
