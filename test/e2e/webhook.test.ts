// The Watcher sidecar injector on the real API server: the API server itself calls the gateway's HTTPS
// endpoint (dev mode, url https://127.0.0.1:<port>/admit/<hook>), which calls the watcher-sidecar
// function with the pod's Watcher as context, for pods created directly and by ReplicaSets. The gateway
// requires the API server's webhook client certificate: a neighbour POSTing reviews is refused. A CA roll
// (kubeloop certs rotate --ca) keeps the hook called throughout, and the old CA leaves after the overlap.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { AppsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { splitPemCertificates } from '../../certs/inspect.ts';
import { bundleFromSecret, readCertificateSecret } from '../../certs/secret-store.ts';
import { createCaCertificate, issueLeafCertificate, newRsaKey } from '../../lib/pki/x509.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { annotatedPod, clientCertificateOf, createWatcher, installWatcherCrd, kubectl, logwatch, startWatcherSidecarFor, type WatcherSidecarUnderTest } from './webhook-harness.ts';

let suite: ClusterSuite;
let core: CoreV1Api;
let apps: AppsV1Api;
let ns: string;
let under: WatcherSidecarUnderTest;

beforeAll(async () => {
  suite = await setupClusterSuite('webhook');
  ns = suite.namespace;
  core = suite.kubeConfig.makeApiClient(CoreV1Api);
  apps = suite.kubeConfig.makeApiClient(AppsV1Api);
  await installWatcherCrd(suite);
  await createWatcher(suite, logwatch);
  // Returns once a dry-run pod comes back injected: the Watcher is in the gateway's context cache.
  under = await startWatcherSidecarFor(suite);
});

afterAll(async () => {
  await under?.stop();
  await suite?.cleanup();
});

function expectInjected(pod: V1Pod): void {
  const names = pod.spec?.containers.map((c) => c.name);
  expect(names).toContain('logwatch');
  const sidecar = pod.spec?.containers.find((c) => c.name === 'logwatch');
  expect(sidecar?.envFrom).toEqual([{ configMapRef: { name: 'logwatch-config', optional: true } }]);
  expect(sidecar?.volumeMounts?.[0]).toMatchObject({ name: 'watch-data', mountPath: '/data' });
  expect(pod.spec?.volumes?.map((v) => v.name)).toContain('watch-data');
  expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
  expect(pod.metadata?.annotations?.['watch.kubeloop.dev/injected']).toBe('logwatch');
}

/** The gateway's count of calls to the Watcher sidecar function that answered with `outcome`. */
async function hookCalls(outcome: 'patched' | 'allowed'): Promise<number> {
  const text = await under.webhook.server.metrics.getSingleMetricAsString('kubeloop_admission_hook_calls_total');
  const line = text.split('\n').find((l) => l.startsWith(`kubeloop_admission_hook_calls_total{hook="${under.hookName}",outcome="${outcome}"}`));
  return Number(line?.split(' ').pop() ?? 0);
}

async function createWithKubectl(pod: V1Pod): Promise<{ stdout: string; stderr: string }> {
  const file = join(tmpdir(), `${ns}-${pod.metadata?.name ?? 'pod'}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...pod }));
  return kubectl(suite, 'create', '-n', ns, '-f', file);
}

describe('sidecar injection through the API server', () => {
  it('injects sidecar, volume, envFrom and pull secret into every pod a Deployment’s ReplicaSet creates', async () => {
    // The set-up's dry-run probes went through the hook too.
    const [patchedBefore, allowedBefore] = [await hookCalls('patched'), await hookCalls('allowed')];
    const labels = { app: 'shop' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'shop' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels, annotations: { 'watch.kubeloop.dev/watcher': 'logwatch' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    const pods = await eventually('3 pods of the Deployment', async () => {
      const list = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=shop' });
      return list.items.length === 3 ? list.items : undefined;
    });
    for (const pod of pods) {
      // ReplicaSet pods are named by generateName: the webhook saw them without a name.
      expect(pod.metadata?.generateName).toMatch(/^shop-/);
      expect(pod.spec?.containers.map((c) => c.name)).toEqual(['web', 'logwatch']);
      expectInjected(pod);
      // The sidecar got the ServiceAccount token mount from us, so the API server had no reason to re-run us.
      expect(pod.spec?.containers[1]?.volumeMounts?.map((m) => m.mountPath)).toContain('/var/run/secrets/kubernetes.io/serviceaccount');
    }
    // Three calls injected, none found its work done (a reinvocation would): counted by the gateway.
    expect(await hookCalls('patched')).toBe(patchedBefore + 3);
    expect(await hookCalls('allowed')).toBe(allowedBefore);
  });

  it('leaves a pod without the annotation untouched', async () => {
    const created = await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'plain' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['main']);
    expect(created.metadata?.annotations?.['watch.kubeloop.dev/injected']).toBeUndefined();
  });

  it('creates a pod naming a missing Watcher without the sidecar and returns a warning to the client', async () => {
    const { stderr } = await createWithKubectl(annotatedPod('orphan', 'no-such-watcher'));
    expect(stderr).toContain('Warning: Watcher "no-such-watcher" not found in namespace');
    const pod = await core.readNamespacedPod({ name: 'orphan', namespace: ns });
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['main']);
  });

  it('renames the sidecar when the pod already has a container with its name, and warns', async () => {
    const pod = annotatedPod('clash');
    pod.spec!.containers = [{ name: 'logwatch', image: 'my/own-logwatch:1' }];
    const { stderr } = await createWithKubectl(pod);
    expect(stderr).toContain('the Watcher sidecar was added as "logwatch-1"');
    const created = await core.readNamespacedPod({ name: 'clash', namespace: ns });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['logwatch', 'logwatch-1']);
  });

  it('drops no admission while the serving certificate is rotated during a stream of pod creates', async () => {
    const rotator = under.webhook.rotator!;
    const https = under.webhook.server.app.server;
    // Which certificate each TLS connection the API server opens to us was served with.
    const handshakes: string[] = [];
    const onConnection = (socket: TLSSocket) => handshakes.push((socket.getCertificate() as { serialNumber?: string } | null)?.serialNumber ?? '?');
    https.on('secureConnection', onConnection);
    const serialBefore = await servingSerial();
    const total = 40;
    let next = 0;
    let rotations = 0;
    const worker = async (): Promise<void> => {
      while (next < total) {
        const i = next++;
        if (i === 10 || i === 25) {
          await rotator.check(true);
          rotations++;
        }
        await core.createNamespacedPod({ namespace: ns, body: annotatedPod(`stream-${i}`) });
      }
    };
    try {
      await Promise.all([worker(), worker(), worker(), worker()]);
      expect(rotations).toBe(2);
      const serialAfter = await servingSerial();
      expect(serialAfter).not.toBe(serialBefore);

      // The API server keeps its connections alive (it opened them all before the first rotation). Nothing
      // is in flight now (only this suite's namespace is sent here), so close them: its next calls must
      // handshake again, and are served the rotated certificate.
      (https as unknown as { closeAllConnections(): void }).closeAllConnections();
      await sleep(300);
      // Only connections from here on: our own servingSerial() probes handshake too.
      handshakes.length = 0;
      for (let i = 0; i < 3; i++) await core.createNamespacedPod({ namespace: ns, body: annotatedPod(`after-rotation-${i}`) });
      expect(handshakes.map((serial) => serial.toUpperCase())).toContain(serialAfter.toUpperCase());
    } finally {
      https.off('secureConnection', onConnection);
    }
    const list = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=probe' });
    const rotated = list.items.filter((p) => /^(stream|after-rotation)-/.test(p.metadata?.name ?? ''));
    expect(rotated).toHaveLength(total + 3);
    // failurePolicy is Ignore: a dropped admission would show as a pod without the sidecar.
    for (const pod of rotated) expectInjected(pod);
  });
});

/** The serial of the certificate the gateway serves, verified against the rotator's CA only; connecting as the API server does. */
async function servingSerial(): Promise<string> {
  const { port } = new URL(under.webhook.url);
  const client = await clientCertificateOf(join(inject('clusterDir'), 'webhook-client.kubeconfig'));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), ca: under.webhook.rotator!.bundle.ca.certPem, ...client }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('who may POST AdmissionReviews', () => {
  const agents: Agent[] = [];
  afterAll(async () => {
    for (const agent of agents) await agent.close();
  });
  /** A forged review for the suite's namespace (whose Watcher the hook would answer with), sent with `client`. */
  const forge = (client?: { cert: string; key: string }) => {
    const agent = new Agent({ connect: { ca: under.webhook.rotator!.bundle.ca.certPem, ...(client ?? {}) } });
    agents.push(agent);
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'forged', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: ns, operation: 'CREATE', object: { apiVersion: 'v1', kind: 'Pod', ...annotatedPod('forged') } },
    };
    return request(`${under.webhook.url}/admit/${under.hookName}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) });
  };

  it('refuses a caller without a certificate, or with one from another CA, in the TLS handshake', async () => {
    await expect(forge()).rejects.toThrow();
    const now = new Date();
    const ca = createCaCertificate({ key: await newRsaKey(), subject: { commonName: 'kubeloop-local-ca' }, now, days: 1 });
    const lookalike = issueLeafCertificate({ key: await newRsaKey(), issuer: ca, subject: { commonName: 'kube-apiserver-webhook-client' }, now, days: 1, usage: 'client' });
    await expect(forge({ cert: lookalike.certPem, key: lookalike.keyPem })).rejects.toThrow();
  });

  it('answers 403 to another client of the cluster CA (the cluster admin), with the accepted name', async () => {
    const reply = await forge(await clientCertificateOf(join(inject('clusterDir'), 'kubeconfig')));
    expect(reply.statusCode).toBe(403);
    expect(((await reply.body.json()) as { message: string }).message).toContain('accepted: kube-apiserver-webhook-client');
  });

  it('answers the holder of the API server\'s webhook client certificate (as the API server did for every pod above)', async () => {
    const reply = await forge(await clientCertificateOf(join(inject('clusterDir'), 'webhook-client.kubeconfig')));
    expect(reply.statusCode).toBe(200);
    expect(((await reply.body.json()) as { response: { uid: string } }).response.uid).toBe('forged');
  });
});

describe('kubeloop certs rotate --ca', () => {
  it('replaces the CA while the API server keeps calling the hook, and drops the old CA from the Secret and the caBundle after the overlap', async () => {
    const location = { namespace: under.certNamespace, name: 'kubeloop-webhook-tls' };
    const configuration = `kubeloop-admission-hooks-${ns}`;
    const secretCas = async () => splitPemCertificates(bundleFromSecret((await readCertificateSecret(under.webhook.client, location))!).ca.certPem);
    const [oldCa] = await secretCas();
    const child = spawn(process.execPath, [
      'cli/bin.js', 'certs', 'rotate', '--ca', '--overlap-seconds=6',
      `--kubeconfig=${suite.kubeconfigPath}`, `--namespace=${under.certNamespace}`, `--configuration=${configuration}`,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    let running = true;
    void exited.then(() => (running = false));
    // failurePolicy is Ignore: a call the API server could not make (an untrusted certificate) shows as a pod without the sidecar.
    let admitted = 0;
    do {
      expectInjected(await core.createNamespacedPod({ namespace: ns, body: annotatedPod(`roll-${admitted}`), dryRun: 'All' }));
      admitted += 1;
    } while (running);
    const [code] = (await exited) as [number | null];
    expect(code, output).toBe(0);
    expect(output).toContain('previous CA removed');
    expect(admitted).toBeGreaterThan(1);

    const cas = await secretCas();
    expect(cas).toHaveLength(1);
    expect(cas[0]).not.toBe(oldCa);
    await eventually('the hook configuration to trust the new CA only', async () => {
      const bundle = (await kubectl(suite, 'get', 'mutatingwebhookconfiguration', configuration, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}')).stdout;
      return Buffer.from(bundle, 'base64').toString('utf8').trim() === cas[0]!.trim();
    });
    // The gateway serves a certificate of the new CA, and the hook is still called.
    await eventually('the gateway to serve a certificate of the new CA (verified against it alone)', async () => under.webhook.rotator!.bundle.ca.certPem === cas[0] && (await servingSerial().then(() => true, () => false)));
    expectInjected(await core.createNamespacedPod({ namespace: ns, body: annotatedPod('after-roll'), dryRun: 'All' }));
  });
});

describe('failure policy', () => {
  it('with the webhook stopped and failurePolicy Ignore, an annotated pod is still created (without sidecar)', async () => {
    await under.webhook.stop();
    const created = await core.createNamespacedPod({ namespace: ns, body: annotatedPod('after-stop') });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['main']);
  });
});
