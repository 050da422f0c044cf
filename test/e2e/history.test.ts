// `kubeloop history` through the API server: the router's history API registered as an aggregated API
// (APIService v1alpha1.history.kubeloop.dev) on the real control plane. Two routers with leader election,
// and the APIService leads to the standby, which forwards to the leader (whose recorder holds it). Three reconciles of one ConfigMap
// (the first conflicts: its object changed while the function answered) are shown with their triggers and
// outcomes; a user who may not get the ConfigMap is refused by the router's SubjectAccessReview, and a
// caller that is not the API server (no front-proxy certificate, or another CA's) is refused at the door. The
// leader also writes its entries to rotated history files, read offline (kubeloop history --file) and replayed.
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../cli/commands/history.ts';
import { run as replay } from '../../cli/commands/replay.ts';
import { createCertificateAuthority, issueCertificate } from '../../cli/cluster/pki.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { patchAction, respond } from '../../lib/sdk/index.ts';
import { historySource, startHistoryApi, type HistoryApi } from '../../router/history/history-api.ts';
import { FORWARDED_BY_HEADER } from '../../router/history/peer-forward.ts';
import { HISTORY_FILE } from '../../router/history/history-files.ts';
import type { ObjectHistory } from '../../router/history/history-documents.ts';
import { applyManifest } from '../../cli/dev/apply-manifests.ts';
import { DEV_HISTORY_SERVICE, devHistoryManifests } from '../../cli/dev/dev-history-api.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, quietLogger, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { closeServer } from '../support/close-server.ts';

const APISERVICE = '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.history.kubeloop.dev';
const READER_ROLE = 'kubeloop-e2e-history-reader';

let h: RouterHarness;
let ns: string;
let fn: HeldFunction;
let api: HistoryApi;
let leaderApi: HistoryApi;
let serverCa: string;
let historyDir: string;

/** Labels a ConfigMap `echo=<data.input>` with a resourceVersion-tested patch; can hold one answer. */
interface HeldFunction {
  url: string;
  hold(): { called: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function heldFunction(): Promise<HeldFunction> {
  let pending: { arrived: () => void; released: Promise<void> } | undefined;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      void (async () => {
        const { object } = JSON.parse(body) as ReconcileRequest;
        const hold = pending;
        pending = undefined;
        if (hold) {
          hold.arrived();
          await hold.released;
        }
        const input = (object as V1ConfigMap).data?.input ?? '';
        const patch = patchAction(object, (draft) => {
          draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, echo: input } };
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(respond(patch ? [patch] : [])));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    hold() {
      let arrived!: () => void;
      let release!: () => void;
      const called = new Promise<void>((r) => (arrived = r));
      pending = { arrived, released: new Promise<void>((r) => (release = r)) };
      return { called, release };
    },
    close: () => closeServer(server),
  };
}

const history = (args: string[]) => captured(run, [...args, '--kubeconfig', h.suite.kubeconfigPath]);

async function captured(command: (argv: string[]) => Promise<number>, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const code = await command(args);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const configMaps = () => `/api/v1/namespaces/${ns}/configmaps`;
const echoOf = (name: string, value: string) =>
  eventually(`${name} labelled echo=${value}`, async () => (await h.client.request<V1ConfigMap>({ path: `${configMaps()}/${name}` })).metadata?.labels?.echo === value);

beforeAll(async () => {
  h = await routerHarness('history');
  ns = h.suite.namespace;
  fn = await heldFunction();
  const loops = [inlineLoop('history-echo', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { history: 'yes' } }, function: { url: fn.url } })];
  const leaderElection = { namespace: ns, name: 'history-router' };
  historyDir = mkdtempSync(join(tmpdir(), 'history-files-'));
  // The leader also appends each entry to rotated files (--history-dir), read offline by kubeloop history --file.
  const leader = await h.router(loops, { leaderElection, identity: 'history-leader', historyFiles: { dir: historyDir, maxBytes: 1 << 20, files: 2 } });
  await leader.waitForLoop('history-echo');
  const standby = await h.router(loops, { leaderElection, identity: 'history-standby' });
  await eventually('the standby sees the leader', async () => (await standby.historyOwner('history-echo', `${ns}/web`)) === 'history-leader');
  // The serving certificate names the Service, as the aggregator checks it (<service>.<namespace>.svc); both replicas share it.
  const ca = await createCertificateAuthority('history-e2e-ca');
  const serving = await issueCertificate(ca, { commonName: DEV_HISTORY_SERVICE, usage: 'server', hosts: [`${DEV_HISTORY_SERVICE}.${ns}.svc`] });
  serverCa = ca.certPem;
  const ports = new Map<string, number>();
  const peers = async (identity: string) => (ports.has(identity) ? { host: '127.0.0.1', port: ports.get(identity)! } : undefined);
  const serve = (router: typeof leader) => startHistoryApi({ source: historySource(router), client: h.client, logger: quietLogger(), port: 0, host: '127.0.0.1', tls: serving, peers });
  leaderApi = await serve(leader);
  api = await serve(standby);
  ports.set('history-leader', Number(new URL(leaderApi.url).port));
  const port = Number(new URL(api.url).port);
  ports.set('history-standby', port);
  // No kube-proxy on the local control plane: an ExternalName Service leads the aggregator to this process, as in kubeloop dev.
  const discovery = new ResourceDiscovery(h.client);
  for (const manifest of devHistoryManifests({ port, caPem: ca.certPem }, ns)) await applyManifest(h.client, discovery, manifest);
  // What the chart grants every authenticated user: reaching the API at all; the router's own check decides per object.
  await h.client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: { metadata: { name: READER_ROLE }, rules: [{ apiGroups: ['history.kubeloop.dev'], resources: ['histories'], verbs: ['get'] }] },
  });
  await h.client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: { metadata: { name: READER_ROLE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_ROLE }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }] },
  });
  // alice holds the built-in admin role in the namespace (ConfigMaps, no ClusterLoops); bob holds nothing.
  await h.client.request({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
    body: { metadata: { name: 'alice-reads' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] },
  });
  await eventually(
    'the APIService Available',
    async () => {
      const live = await h.client.request<{ status?: { conditions?: Array<{ type: string; status: string }> } }>({ path: APISERVICE });
      return live.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    },
    60_000,
  );
}, 120_000);

afterAll(async () => {
  // The APIService first: an unavailable aggregated API would slow every other suite's discovery.
  await h?.client.request({ method: 'DELETE', path: APISERVICE }).catch(() => undefined);
  for (const kind of ['clusterrolebindings', 'clusterroles']) await h?.client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}/${READER_ROLE}` }).catch(() => undefined);
  await api?.close();
  await leaderApi?.close();
  await h?.close();
  await fn?.close();
  if (historyDir) rmSync(historyDir, { recursive: true, force: true });
});

describe('kubeloop history', () => {
  it('shows three reconciles of one object, the first conflicted, with their triggers and outcomes', async () => {
    const hold = fn.hold();
    await h.client.request({ method: 'POST', path: configMaps(), body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', labels: { history: 'yes' } }, data: { input: 'a' } } });
    await hold.called;
    // Changed while the function answers: the answer's patch (resourceVersion-tested) conflicts.
    await h.client.request({ method: 'PATCH', path: `${configMaps()}/web`, contentType: 'application/merge-patch+json', body: { data: { input: 'b' } } });
    hold.release();
    await echoOf('web', 'b');
    await h.client.request({ method: 'PATCH', path: `${configMaps()}/web`, contentType: 'application/merge-patch+json', body: { data: { input: 'c' } } });
    await echoOf('web', 'c');

    const called = (entries: ObjectHistory['entries']) => entries.filter((e) => e.actions.length > 0);
    const shown = await eventually('three answered reconciles in the history', async () => {
      const result = await history(['history-echo', `${ns}/web`, '-o', 'json']);
      if (result.code !== 0) throw new Error(result.err);
      const parsed = JSON.parse(result.out) as ObjectHistory;
      const answered = called(parsed.entries);
      return answered.length >= 3 && answered.at(-1)?.request !== undefined && parsed;
    });
    // Asked at the standby, answered by the leader that reconciled it.
    expect(shown).toMatchObject({ kind: 'ObjectHistory', loop: 'history-echo', servedBy: 'history-leader', object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'web' } });
    // The first reconcile conflicts. Its backoff retry still runs after the change to b was reconciled, and
    // when it comes before the router has seen its own write it conflicts too (no trigger; retried once more):
    // the reconciles the changes to b and c triggered are the ones that must have applied.
    const answered = called(shown.entries);
    const [first] = answered;
    const changed = answered.filter((e) => e.triggers.some((t) => t.source === 'primary' && t.type === 'MODIFIED'));
    const [second, third] = changed.slice(-2);
    expect(first?.outcome).toBe('conflict');
    expect(first?.triggers[0]).toMatchObject({ source: 'primary', type: 'ADDED', object: `${ns}/web` });
    expect(first?.writes).toEqual([expect.objectContaining({ action: `patch v1/ConfigMap ${ns}/web`, result: 'conflict' })]);
    for (const later of [second, third]) {
      expect(later?.outcome).toBe('ok');
      expect(later?.triggers.some((t) => t.source === 'primary' && t.type === 'MODIFIED')).toBe(true);
      expect(later?.writes).toEqual([expect.objectContaining({ action: `patch v1/ConfigMap ${ns}/web`, result: 'applied' })]);
    }

    // The latest call's request is kept: replayed against the function, it asks for the same patch.
    expect(third?.request).toMatchObject({ kind: 'ReconcileRequest', object: { metadata: { name: 'web' }, data: { input: 'c' } } });
    const saved = join(mkdtempSync(join(tmpdir(), 'history-')), 'web.json');
    writeFileSync(saved, JSON.stringify(shown));
    const replayed = await captured(replay, ['--history', saved, '--to', fn.url]);
    expect(replayed.out).toMatch(/PASS .*ConfigMap .*\/web at .* \(ok\)/);
    expect(replayed.code).toBe(0);

    const text = await history(['--cluster-loop', 'history-echo', '-n', ns, 'web']);
    expect(text.code).toBe(0);
    // history-echo is a ClusterLoop: --loop names the namespaced Loop <ns>/history-echo, which no router runs.
    const wrongKind = await history(['--loop', 'history-echo', '-n', ns, 'web']);
    expect(wrongKind.code).toBe(1);
    expect(wrongKind.err).toContain(`no Loop ${ns}/history-echo runs on router`);
    expect(wrongKind.err).toContain('for a ClusterLoop use --cluster-loop history-echo');
    expect(text.out).toContain(`ConfigMap ${ns}/web, Loop history-echo`);
    expect(text.out).toMatch(new RegExp(`conflict .*\\n  trigger   primary ADDED v1/ConfigMap ${ns}/web rv=\\d+`));
    expect(text.out).toContain(`patch v1/ConfigMap ${ns}/web -> conflict`);
    expect(text.out).toContain(`patch v1/ConfigMap ${ns}/web -> applied`);

    // The same reconciles in the leader's history files, read offline; the latest call's entry replays from there too.
    const filed = await eventually('the reconciles in the history files', async () => {
      const result = await captured(run, ['--file', historyDir, '--cluster-loop', 'history-echo', '-n', ns, 'web', '-o', 'json']);
      const parsed = JSON.parse(result.out) as ObjectHistory;
      return parsed.entries.some((e) => e.startedAt === third?.startedAt) && parsed;
    });
    expect(filed).toMatchObject({ loop: 'history-echo', servedBy: 'history-leader', object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'web' } });
    expect(filed.entries.map((e) => [e.startedAt, e.outcome])).toEqual(expect.arrayContaining([first, second, third].map((e) => [e?.startedAt, e?.outcome])));
    expect(filed.entries.find((e) => e.startedAt === first?.startedAt)?.writes).toEqual([expect.objectContaining({ result: 'conflict' })]);
    const fromFile = await captured(replay, ['--history', join(historyDir, HISTORY_FILE), '--to', fn.url]);
    expect(fromFile.out).toMatch(/PASS .*ConfigMap .*\/web at .* \(ok\)/);
    expect(fromFile.code).toBe(0);
  }, 90_000);

  it('shows the history to a user who may get the object, and refuses one who may not', async () => {
    await eventually('web has a history', async () => (await history(['history-echo', `${ns}/web`, '-o', 'json'])).code === 0);
    const alice = await history(['history-echo', `${ns}/web`, '-o', 'json', '--as', 'alice']);
    expect(alice.err).toBe('');
    expect(alice.code).toBe(0);
    const entries = (JSON.parse(alice.out) as ObjectHistory).entries;
    expect(entries.length).toBeGreaterThan(0);
    // The request holds only ConfigMaps of her namespace: she may see it.
    expect(entries.findLast((e) => e.request || e.requestOmitted)).toHaveProperty('request');

    const bob = await history(['history-echo', `${ns}/web`, '--as', 'bob']);
    expect(bob.code).toBe(2);
    expect(bob.out).toBe('');
    // bob may not get the ClusterLoop either: the refusal names neither its kind nor whether it runs.
    expect(bob.err).toContain(`user "bob" cannot get the history of "web" in namespace "${ns}" through Loop history-echo:`);
    expect(bob.err).not.toContain('configmaps');
    // Who may get the object: alice may read it in her namespace only, not another one's of the same name.
    const elsewhere = await history(['history-echo', `default/web`, '--as', 'alice']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.err).toContain('user "alice" cannot get the history of "web" in namespace "default" through Loop history-echo:');
  }, 60_000);

  it('tells a user who may not get a Loop nothing of it: no such Loop and not yours are the same 403', async () => {
    // Before: "no Loop <ns>/ghost runs on router ..." (404) against "cannot get configmaps ..." (403), and
    // "Loop history-echo reconciles ConfigMap (namespaced)" (400): which Loops run and what they reconcile.
    const refusal = async (args: string[]) => {
      const answer = await history([...args, '--as', 'alice']);
      expect(answer.code).toBe(2);
      expect(answer.out).toBe('');
      return answer.err;
    };
    const runsNotYours = await refusal(['history-echo', 'default/web']);
    const noSuchLoop = await refusal(['no-such-loop', 'default/web']);
    expect(noSuchLoop).toBe(runsNotYours.replace('Loop history-echo', 'Loop no-such-loop'));
    // A namespaced Loop elsewhere; the ClusterLoop asked about a cluster-scoped name (it reconciles a namespaced
    // kind), or about an object of her own namespace it never reconciled (an empty history would say it runs).
    const ghost = await refusal(['--loop', 'ghost', '-n', 'default', 'web']);
    expect(ghost).toBe(runsNotYours.replace('Loop history-echo', 'Loop default/ghost'));
    expect(await refusal(['history-echo', 'web'])).toBe((await refusal(['no-such-loop', 'web'])).replace('Loop no-such-loop', 'Loop history-echo'));
    expect(await refusal(['history-echo', `${ns}/never-reconciled`])).toBe((await refusal(['no-such-loop', `${ns}/never-reconciled`])).replace('Loop no-such-loop', 'Loop history-echo'));
    for (const message of [runsNotYours, noSuchLoop, ghost]) expect(message).not.toMatch(/configmap|runs on router|reconciles ConfigMap/i);
  }, 60_000);

  it('refuses a caller that is not the API server, whatever user its headers claim', async () => {
    const path = `/apis/history.kubeloop.dev/v1alpha1/namespaces/${ns}/histories/web?loop=history-echo`;
    const call = (tls: { cert?: string; key?: string }, extraHeaders: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(`${api.url}${path}`, { ca: serverCa, servername: `${DEV_HISTORY_SERVICE}.${ns}.svc`, headers: { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters', ...extraHeaders }, ...tls }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const anonymous = await call({});
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
    expect(anonymous.body).not.toContain('entries');
    // Nor does claiming to be a replica forwarding a request help without the replicas' certificate.
    const claimed = await call({}, { [FORWARDED_BY_HEADER]: 'history-standby' });
    expect(claimed.status).toBe(401);
    // A certificate the cluster CA signed (the admin's, in system:masters) is not the front proxy's.
    const user = h.suite.kubeConfig.getCurrentUser();
    const admin = await call({ cert: Buffer.from(user?.certData ?? '', 'base64').toString(), key: Buffer.from(user?.keyData ?? '', 'base64').toString() });
    expect(admin.status).toBe(401);
    expect(admin.body).not.toContain('entries');
  }, 30_000);
});
