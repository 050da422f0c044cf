// A namespace admin's own controller and admission hook as pods on a real node, as docs/tenants.md ships them:
// `kubeloop init` projects built by `kubeloop image build` (no Docker), their function.yaml, loop.yaml and
// admission-hook.yaml applied by a user holding nothing but `admin` in team-a; the chart's router calls the
// controller and the API server calls the hook through the gateway, each through its Service. Then the webhook's
// CA and serving certificate are replaced in the cluster (`kubeloop certs rotate --ca`) while the API server keeps
// calling the gateway: no admission is lost, and the gateway pods end up serving the new certificate.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import type { ControlPlane } from '../../cli/cluster/index.ts';
import { applyManifest, type Manifest } from '../../cli/dev/apply-manifests.ts';
import { KubeClient, ResourceDiscovery, isApiError } from '../../lib/kube/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { packTarball } from '../support/package-tarball.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';
import { namespaceAdmin } from '../e2e/tenant-admin.ts';
import { installChartOnRealNode, log, NAMESPACE, realNodeRunnable } from '../support/real-node-chart.ts';

const run = promisify(execFile);
const BIN = join(REPO_ROOT, 'cli', 'bin.js');
const TEAM = 'team-a';
const API = '/apis/kubeloop.dev/v1alpha1';
/** The gateway's Secret and Service with the release `kubeloop` (the chart's names). */
const WEBHOOK_SECRET = 'kubeloop-webhook-tls';

let plane: ControlPlane;
let admin: KubeClient;
let alice: KubeClient;
let work: string;

/** `kubeloop <args>` as a user runs it, in `cwd`. */
async function kubeloop(args: string[], cwd = work): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, ...args], { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/**
 * README's path from `kubeloop init` to an image on the node: init, `npm install` (its lockfile: the Dockerfile's
 * `npm ci` needs it), `kubeloop image build`; the image is loaded into the real node's containerd.
 * The one change: the dependency on kubeloop names the packed tarball, as the registry will serve it.
 */
async function buildProject(name: string, initArgs: string[], tarball: string): Promise<string> {
  const started = Date.now();
  await kubeloop(['init', name, ...initArgs]);
  const dir = join(work, name);
  const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  pkg.dependencies.kubeloop = `file:${tarball}`;
  await writeFile(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  await run('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: dir });
  const archive = join(work, `${name}.tar`);
  const printed = await kubeloop(['image', 'build', '--output', archive], dir);
  // No --registry or --tag: the name function.yaml's Deployment runs.
  expect(printed).toContain(`ghcr.io/your-org/${name}:0.1.0`);
  await plane.realNode?.importImage(archive);
  log(`${name}: init, lockfile, image build and import in ${Math.round((Date.now() - started) / 1000)} s`);
  return dir;
}

async function documents(dir: string, file: string): Promise<Manifest[]> {
  return parseAllDocuments(await readFile(join(dir, file), 'utf8')).map((d) => d.toJS() as Manifest);
}

/** `kubectl apply -n team-a -f <file>` as alice: server-side apply of each document, as written. */
async function applyAsAlice(dir: string, file: string): Promise<void> {
  const discovery = new ResourceDiscovery(alice);
  for (const manifest of await documents(dir, file)) await applyManifest(alice, discovery, manifest, TEAM);
}

const readyOf = async (path: string): Promise<string | undefined> => {
  const object = await admin.request<{ status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }>({ path });
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  return ready && `${ready.status} ${ready.reason ?? ''}: ${ready.message ?? ''}`;
};

/** Alice's dry-run Pod create: undefined when admitted, the refusal's message otherwise. */
async function aliceCreatesPod(name: string, labels: Record<string, string>): Promise<string | undefined> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  try {
    await alice.request({ method: 'POST', path: `/api/v1/namespaces/${TEAM}/pods`, body, query: { dryRun: 'All' } });
    return undefined;
  } catch (error) {
    if (!isApiError(error)) throw error;
    return error.message;
  }
}

/** Two admissions through the gateway: team-a's hook (a tenant configuration) and the chart's Watcher sidecar (the chart's). */
async function admissionsHold(round: number): Promise<string | undefined> {
  const denial = await aliceCreatesPod(`unlabelled-${round}`, {});
  if (!denial?.includes('needs a "team" label')) return `round ${round}: team-a's hook answered ${denial ?? 'admitted'}`;
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `watched-${round}`, annotations: { 'watch.kubeloop.dev/watcher': 'log-watcher' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } };
  const created = await admin.request<{ spec: { containers: { name: string }[] } }>({ method: 'POST', path: '/api/v1/namespaces/default/pods', body, query: { dryRun: 'All' } });
  if (!created.spec.containers.some((c) => c.name === 'log-watcher')) return `round ${round}: the Watcher sidecar was not injected`;
  return undefined;
}

/** The DER of the certificate a gateway pod serves on 8443 (the host reaches pod addresses over the node's veth). */
function servedCertificate(host: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: 8443, servername: `kubeloop-webhook.${NAMESPACE}.svc`, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().raw);
      socket.destroy();
    });
    socket.setTimeout(5000, () => socket.destroy(new Error(`no TLS handshake with ${host}:8443 in 5 s`)));
    socket.on('error', reject);
  });
}

async function webhookSecret(): Promise<{ ca: string; serving: string }> {
  const secret = await admin.request<{ data: Record<string, string> }>({ path: `/api/v1/namespaces/${NAMESPACE}/secrets/${WEBHOOK_SECRET}` });
  const text = (key: string): string => Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8');
  return { ca: text('ca.crt'), serving: text('tls.crt') };
}

beforeAll(async () => {
  if (!canRun) return;
  work = await mkdtemp(join(tmpdir(), 'kubeloop-tenant-real-node-'));
  // Packed while the plane starts; awaited below (a failed start leaves it unawaited, not unhandled).
  const tarball = packTarball(work);
  tarball.catch(() => undefined);
  ({ plane } = await installChartOnRealNode());
  admin = await KubeClient.fromKubeConfig(plane.kubeConfig());
  await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: TEAM } } });
  alice = await namespaceAdmin(admin, TEAM, 'alice');
  // Her fresh RoleBinding is honoured once the API server's RBAC cache has it.
  await eventually('alice may create in team-a', async () => (await aliceCreatesPod('probe', { team: 'a' })) === undefined, 60_000);
  const { path } = await tarball;
  log(`packed ${path}; building the projects' images`);
  await Promise.all([buildProject('team-labeller', [], path), buildProject('team-policy', ['--admission', 'validating'], path)]);
}, 900_000);

afterAll(async () => {
  await plane?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const canRun = await realNodeRunnable();

describe.runIf(canRun)("a namespace admin's controller and hook as pods on a real node", () => {
  it('runs both functions from the images `kubeloop image build` made, as function.yaml says, with nothing but admin in team-a', async () => {
    // The README's signing-key step: the controller's function.yaml reads its key from this Secret (the hook is unsigned).
    const key = `whsec_${randomBytes(32).toString('base64')}`;
    await alice.request({ method: 'POST', path: `/api/v1/namespaces/${TEAM}/secrets`, body: { metadata: { name: 'team-labeller-signing' }, stringData: { secret: key } } });
    for (const name of ['team-labeller', 'team-policy']) await applyAsAlice(join(work, name), 'function.yaml');
    for (const name of ['team-labeller', 'team-policy']) {
      await eventually(
        `${name}'s 2 pods Ready`,
        async () => {
          const pods = await alice.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>({ path: `/api/v1/namespaces/${TEAM}/pods`, query: { labelSelector: `app.kubernetes.io/name=${name}` } });
          return pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 2;
        },
        180_000,
      );
    }
  });

  it("reconciles team-a's ConfigMaps: the chart's router calls the controller through its Service", async () => {
    await applyAsAlice(join(work, 'team-labeller'), 'loop.yaml');
    await eventually('Loop team-labeller Ready=True', async () => (await readyOf(`${API}/namespaces/${TEAM}/loops/team-labeller`))?.startsWith('True'), 120_000);
    await alice.request({ method: 'POST', path: `/api/v1/namespaces/${TEAM}/configmaps`, body: { metadata: { name: 'settings' }, data: { a: '1' } } });
    await eventually(
      'ConfigMap settings labelled by team-labeller',
      async () => (await alice.request<{ metadata: { labels?: Record<string, string> } }>({ path: `/api/v1/namespaces/${TEAM}/configmaps/settings` })).metadata.labels?.['team-labeller.example.com/reconciled'] === 'true',
      120_000,
    );
  });

  it("denies team-a's unlabelled Pods and admits labelled ones: the API server calls the gateway, which calls the hook's Service", async () => {
    await applyAsAlice(join(work, 'team-policy'), 'admission-hook.yaml');
    await eventually('AdmissionHook team-policy Ready=True', async () => (await readyOf(`${API}/namespaces/${TEAM}/admissionhooks/team-policy`))?.startsWith('True'), 120_000);
    // The tenant configuration takes a moment to reach the API server's admission chain.
    const denial = await eventually('an unlabelled Pod denied', async () => (await aliceCreatesPod('no-label', {})) ?? false, 120_000);
    expect(denial).toContain('Pod "no-label" needs a "team" label');
    expect(await aliceCreatesPod('labelled', { team: 'a' })).toBeUndefined();
  });

  it("keeps admitting through the gateway's Service while its CA and certificate are replaced in the cluster, then serves the new ones", async () => {
    const watcher = parseYaml(await readFile(join(REPO_ROOT, 'samples', 'watcher.yaml'), 'utf8')) as Record<string, unknown>;
    await admin.request({ method: 'POST', path: '/apis/watch.kubeloop.dev/v1alpha1/namespaces/default/watchers', body: watcher });
    await eventually('the Watcher sidecar injected', async () => (await admissionsHold(0)) === undefined, 120_000);
    const before = await webhookSecret();
    let stopped = false;
    let rounds = 0;
    const failures: string[] = [];
    const stream = (async () => {
      while (!stopped) {
        const round = (rounds += 1);
        const failure = await admissionsHold(round).catch((error: unknown) => `round ${round}: ${String(error)}`);
        if (failure) failures.push(failure);
      }
    })();
    // A new CA and serving certificate; both CAs trusted for 20 s, then the new one alone.
    const rotated = await kubeloop(['certs', 'rotate', '--ca', '--overlap-seconds', '20', '--kubeconfig', plane.kubeconfigPath, '--namespace', NAMESPACE, '--secret', WEBHOOK_SECRET]);
    log(rotated.trim());
    const after = await webhookSecret();
    expect(after.serving).not.toBe(before.serving);
    expect(after.ca.match(/BEGIN CERTIFICATE/g)).toHaveLength(1);
    expect(before.ca).not.toContain(after.ca.trim());
    // Every gateway pod serves the new certificate (swapped in through its watch of the Secret, no restart).
    const pem = new X509Certificate(after.serving).raw;
    const gateways = (await admin.request<{ items: { metadata: { name: string }; status?: { podIP?: string } }[] }>({ path: `/api/v1/namespaces/${NAMESPACE}/pods` })).items.filter((p) => /-webhook-/.test(p.metadata.name));
    expect(gateways.length).toBeGreaterThan(0);
    for (const pod of gateways) await eventually(`${pod.metadata.name} serving the new certificate`, async () => (await servedCertificate(pod.status?.podIP ?? '')).equals(pem), 60_000);
    // With the old CA gone from every caBundle, the API server's calls verify against the new CA alone.
    const last = rounds;
    await eventually('5 more rounds after the roll', async () => rounds >= last + 5, 120_000);
    stopped = true;
    await stream;
    expect(failures).toEqual([]);
    log(`${rounds} admission rounds across the rotation`);
  });
});
