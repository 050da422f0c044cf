// Proof that the local control plane is a real one: controllers, scheduler, kwok pod phases, garbage
// collection, CRD validation and admission webhooks all behave as on a cluster.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Pod,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartCrdFile, chartCrdFiles } from '../../cli/chart-crds.ts';
import { createCertificateAuthority, FAIL_ANNOTATION, issueCertificate } from '../../cli/cluster/index.ts';
import { waitEstablished } from '../cluster/crds-established.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

const run = promisify(execFile);
const SAMPLES_DIR = 'samples';
const PODSET_CRD = chartCrdFile('podsets.app.kubeloop.dev.yaml');

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => /\.ya?ml$/.test(f) && statSync(f).isFile())
    .sort();
}

let suite: ClusterSuite;
let core: CoreV1Api;
let apps: AppsV1Api;
let ns: string;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(suite.binaries.kubectl, ['--kubeconfig', suite.kubeconfigPath, ...args]);
  return stdout;
}

/** The namespaces a manifest file names explicitly (metadata.namespace), in order, without repeats. */
function pinnedNamespaces(file: string): string[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as { metadata?: { namespace?: unknown } } | null);
  return [...new Set(docs.map((d) => d?.metadata?.namespace).filter((n): n is string => typeof n === 'string'))];
}

/** Creates a namespace unless it exists; another suite creating it at the same moment is fine. */
async function ensureNamespace(name: string): Promise<void> {
  try {
    await kubectl('create', 'namespace', name);
  } catch (error) {
    if (!/AlreadyExists|already exists/.test(String(error))) throw error;
  }
}

function barePod(name: string, restartPolicy: 'Never' | 'OnFailure' | 'Always', annotations: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, annotations },
    spec: { restartPolicy, containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'] }] },
  };
}

async function podPhase(name: string): Promise<string | undefined> {
  return (await core.readNamespacedPod({ name, namespace: ns })).status?.phase;
}

beforeAll(async () => {
  suite = await setupClusterSuite('control-plane');
  ns = suite.namespace;
  core = suite.kubeConfig.makeApiClient(CoreV1Api);
  apps = suite.kubeConfig.makeApiClient(AppsV1Api);
});

afterAll(async () => {
  await suite?.cleanup();
});

describe('workloads through controllers, scheduler and kwok', () => {
  it('runs a Deployment: its ReplicaSet creates pods named by generateName that become Running on kwok nodes', async () => {
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
        },
      },
    });
    const rs = await eventually('a ReplicaSet owned by the Deployment', async () => {
      const list = await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app=web' });
      return list.items.find((r) => r.metadata?.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === 'web'));
    });
    const rsName = rs.metadata?.name as string;
    const pods = await eventually('3 Running pods', async () => {
      const list = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
      const running = list.items.filter((p) => p.status?.phase === 'Running');
      return running.length === 3 ? running : undefined;
    });
    for (const pod of pods) {
      expect(pod.metadata?.generateName).toBe(`${rsName}-`);
      expect(pod.metadata?.name?.startsWith(`${rsName}-`)).toBe(true);
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: rsName, controller: true });
      expect(pod.spec?.nodeName).toMatch(/^kwok-node-/);
      expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    }
    await eventually('the Deployment to report 3 available replicas', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: ns });
      return d.status?.availableReplicas === 3;
    });
  });

  it.each(['Never', 'OnFailure'] as const)('completes a bare pod with restartPolicy %s (phase Succeeded, exit code 0)', async (policy) => {
    const name = `once-${policy.toLowerCase()}`;
    await core.createNamespacedPod({ namespace: ns, body: barePod(name, policy) });
    await eventually(`${name} Succeeded`, async () => (await podPhase(name)) === 'Succeeded');
    const pod = await core.readNamespacedPod({ name, namespace: ns });
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  });

  it(`fails a pod annotated ${FAIL_ANNOTATION}="true" (phase Failed, exit code 1)`, async () => {
    await core.createNamespacedPod({ namespace: ns, body: barePod('doomed', 'Never', { [FAIL_ANNOTATION]: 'true' }) });
    await eventually('doomed Failed', async () => (await podPhase('doomed')) === 'Failed');
    const pod = await core.readNamespacedPod({ name: 'doomed', namespace: ns });
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('keeps a restartPolicy Always pod Running instead of completing it', async () => {
    await core.createNamespacedPod({ namespace: ns, body: barePod('server', 'Always') });
    await eventually('server Running', async () => (await podPhase('server')) === 'Running');
    // A completing pod would have flipped to Succeeded by the time a second one completes.
    await core.createNamespacedPod({ namespace: ns, body: barePod('witness', 'Never') });
    await eventually('witness Succeeded', async () => (await podPhase('witness')) === 'Succeeded');
    expect(await podPhase('server')).toBe('Running');
  });

  it('renews a Lease for every kwok node, so no node goes silent and has its pods marked NotReady', async () => {
    // Without renewals the node lifecycle controller marks every node NotReady after 50 s, and with it
    // every pod on it Ready=False for good: a Deployment then stops reporting its replicas available.
    const coordination = suite.kubeConfig.makeApiClient(CoordinationV1Api);
    const nodes = (await core.listNode()).items.map((n) => n.metadata?.name as string);
    expect(nodes.length).toBeGreaterThan(0);
    const renewTime = async (node: string): Promise<number | undefined> => {
      try {
        const lease = await coordination.readNamespacedLease({ name: node, namespace: 'kube-node-lease' });
        return lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : undefined;
      } catch {
        return undefined;
      }
    };
    const first = new Map<string, number>();
    await eventually('every node Lease renewed after it was first seen', async () => {
      for (const node of nodes) {
        const seen = await renewTime(node);
        if (seen === undefined) return false;
        if (!first.has(node)) first.set(node, seen);
      }
      for (const node of nodes) if ((await renewTime(node)) === first.get(node)) return false;
      return true;
    });
  });

  it('garbage-collects dependents: deleting a Deployment removes its ReplicaSet and pods', async () => {
    const labels = { app: 'doomed-deploy' };
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'doomed-deploy' },
        spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
      },
    });
    await eventually('2 pods', async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=doomed-deploy' })).items.length === 2);
    await apps.deleteNamespacedDeployment({ name: 'doomed-deploy', namespace: ns, propagationPolicy: 'Background' });
    await eventually('ReplicaSets gone', async () => (await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: 'app=doomed-deploy' })).items.length === 0);
    await eventually('pods gone', async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=doomed-deploy' })).items.length === 0);
  });

  it('garbage-collects a ConfigMap whose owner ConfigMap is deleted', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid as string }],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    await eventually('dependent ConfigMap collected', async () => {
      const list = await core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=dependent' });
      return list.items.length === 0;
    });
  });
});

/** The CustomResourceDefinition names the YAML files hold. */
function crdNames(files: readonly string[]): string[] {
  return files.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => (d.toJS() as { metadata?: { name?: string } } | null)?.metadata?.name)).filter((n): n is string => !!n);
}

describe('kubeloop CRDs and samples', () => {
  const crds = chartCrdFiles();
  const crdArgs = crds.flatMap((f) => ['-f', f]);
  const samples = yamlFiles(SAMPLES_DIR);

  it.skipIf(crds.length === 0)("installs every CRD of the chart and they become Established", async () => {
    await kubectl('apply', '--server-side', '--force-conflicts', ...crdArgs);
    const names = crdNames(crds);
    expect(names.length).toBeGreaterThan(0);
    await waitEstablished(suite.kubeConfig, names);
  });

  it.skipIf(crds.length === 0 || samples.length === 0)(`applies every sample in ${SAMPLES_DIR} (server-side apply)`, async () => {
    await kubectl('apply', '--server-side', '--force-conflicts', ...crdArgs);
    await waitEstablished(suite.kubeConfig, crdNames(crds));
    for (const file of samples) {
      // A Loop sample ships its ServiceAccount and RBAC in the namespace it names: apply those as written.
      const pinned = pinnedNamespaces(file);
      for (const namespace of pinned) await ensureNamespace(namespace);
      const out = await kubectl('apply', '--server-side', ...(pinned.length > 0 ? [] : ['-n', ns]), '-f', file);
      expect(out, file).toMatch(/serverside-applied|unchanged|configured|created/);
    }
  });

  it.skipIf(!existsSync(PODSET_CRD))('rejects a PodSet with replicas 11 through the CRD schema', async () => {
    await kubectl('apply', '--server-side', '--force-conflicts', '-f', PODSET_CRD);
    await waitEstablished(suite.kubeConfig, ['podsets.app.kubeloop.dev']);
    const crd = parseAllDocuments(readFileSync(PODSET_CRD, 'utf8'))[0]?.toJS() as { spec: { versions: { name: string; storage?: boolean }[] } };
    const version = (crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0])?.name as string;
    const custom = suite.kubeConfig.makeApiClient(CustomObjectsApi);
    const create = (replicas: number): Promise<unknown> =>
      custom.createNamespacedCustomObject({
        group: 'app.kubeloop.dev',
        version,
        namespace: ns,
        plural: 'podsets',
        body: { apiVersion: `app.kubeloop.dev/${version}`, kind: 'PodSet', metadata: { name: `ps-${replicas}` }, spec: { replicas } },
      });
    const error = await create(11).then(
      () => undefined,
      (e: unknown) => e as { code?: number; body?: string },
    );
    expect(error?.code).toBe(422);
    expect(String(error?.body)).toMatch(/spec\.replicas/);
    await expect(create(3)).resolves.toBeDefined();
  });
});

describe('admission webhooks', () => {
  let server: Server | undefined;
  afterAll(async () => {
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  });

  it('calls a mutating webhook served on 127.0.0.1 with a test CA when a pod is created', async () => {
    const ca = await createCertificateAuthority('e2e-webhook-ca');
    const serving = await issueCertificate(ca, { commonName: '127.0.0.1', hosts: ['127.0.0.1', 'localhost'], usage: 'server' });
    const reviews: { operation?: string; kind?: { kind?: string }; namespace?: string }[] = [];
    server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        const review = JSON.parse(body) as { request: { uid: string; operation?: string; kind?: { kind?: string }; namespace?: string } };
        reviews.push(review.request);
        const patch = [{ op: 'add', path: '/metadata/labels', value: { 'webhook.kubeloop.dev/seen': 'true' } }];
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') },
          }),
        );
      });
    });
    const port = await new Promise<number>((done) => server?.listen(0, '127.0.0.1', () => done((server?.address() as { port: number }).port)));
    const admission = suite.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const configName = `e2e-${ns}`;
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: configName },
        webhooks: [
          {
            name: 'pods.e2e.kubeloop.dev',
            clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: Buffer.from(ca.certPem).toString('base64') },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
            // Only this suite's namespace: the control plane is shared with other suites.
            namespaceSelector: { matchLabels: { 'kubeloop.dev/e2e-suite': ns } },
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
          },
        ],
      },
    });
    try {
      // The API server picks new webhook configurations up asynchronously: create pods until one is mutated.
      let attempt = 0;
      const pod = await eventually('a pod mutated by the webhook', async () => {
        attempt += 1;
        const created = await core.createNamespacedPod({ namespace: ns, body: barePod(`hooked-${attempt}`, 'Always') });
        return created.metadata?.labels?.['webhook.kubeloop.dev/seen'] === 'true' ? created : undefined;
      });
      expect(pod.metadata?.labels).toMatchObject({ 'webhook.kubeloop.dev/seen': 'true' });
      expect(reviews.at(-1)).toMatchObject({ operation: 'CREATE', kind: { kind: 'Pod' }, namespace: ns });
    } finally {
      await admission.deleteMutatingWebhookConfiguration({ name: configName });
    }
  });
});
