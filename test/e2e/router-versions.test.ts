// A ClusterLoop's shadow and canary on a real control plane: a buggy shadow diverges on some pods (metric,
// condition, fixture pairs) while nothing of it is applied; a 20 % canary that answers errors is rolled
// back by itself, only keys of its share ever reached it, and every key is answered by the stable version.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Loop, LoopCondition } from '../../api/loop.ts';
import { readPodNameLabelConfig } from '../../functions/pod-name-label/config.ts';
import { reconcilePodNameLabel } from '../../functions/pod-name-label/reconcile.ts';
import type { Informer } from '../../lib/kube/informer.ts';
import { defineFunction } from '../../lib/sdk/index.ts';
import { serveForTest, type TestServer } from '../../lib/testing/serve.ts';
import { inCanaryShare } from '../../lib/versions/canary-share.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { installCrds, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const BUGGY_LABEL = 'kubeloop.dev/pod-name-buggy';
const LOOPS = '/apis/kubeloop.dev/v1alpha1/clusterloops';

let h: RouterHarness;
let ns: string;
let router: Router;
let stable: string;
let buggy: TestServer;
let pods: Informer<V1Pod>;
let fixtures: string;
/** Every label value any pod ever had, as the watch saw it: a write of the shadow's would show here. */
const labelsSeen = new Set<string>();

beforeAll(async () => {
  h = await routerHarness('router-versions');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  stable = (await h.serve('pod-name-label')).url;
  // The shadow's bug: pods whose name starts with "b" get another label than the live version writes.
  const config = readPodNameLabelConfig({});
  buggy = await serveForTest(
    defineFunction({
      name: 'pod-name-label-buggy',
      reconcile: (request) => reconcilePodNameLabel(request, request.object.metadata?.name?.startsWith('b') ? { ...config, label: BUGGY_LABEL } : config),
    }),
  );
  pods = await watchPods(h.client, ns);
  const see = (pod: V1Pod) => Object.keys(pod.metadata?.labels ?? {}).forEach((l) => labelsSeen.add(l));
  pods.on('add', see);
  pods.on('update', see);
  fixtures = mkdtempSync(join(tmpdir(), 'kubeloop-shadow-'));
  router = await h.router(undefined, { loopSelector: h.loopSelector, shadowFixturesDir: fixtures });
});
afterAll(async () => {
  await pods?.stop();
  await buggy?.close();
  await h?.close();
  if (fixtures) rmSync(fixtures, { recursive: true, force: true });
});

async function createPod(name: string, app: string): Promise<void> {
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: { metadata: { name, labels: { app }, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
}
const labelOf = (name: string) => pods.store.get(`${ns}/${name}`)?.metadata?.labels?.[LABEL];

async function condition(loop: string, type: string): Promise<LoopCondition | undefined> {
  const object = await h.client.request<Loop>({ path: `${LOOPS}/${loop}` });
  return object.status?.conditions?.find((c) => c.type === type);
}

async function counterValue(metric: 'shadowCalls' | 'canaryCalls' | 'canaryRollbacks', labels: Record<string, string>): Promise<number> {
  const { values } = await router.metrics[metric].get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want)).reduce((sum, v) => sum + v.value, 0);
}

describe('a shadow version', () => {
  it('diverges on the pods its bug touches: counted, shown on the Loop and recorded, while only the live answers are applied', async () => {
    const loop = `shadow-${ns}`;
    await h.createLoop(loop, {
      for: { apiVersion: 'v1', kind: 'Pod' },
      namespaces: [ns],
      selector: { matchLabels: { app: 'shadowed' } },
      metadataOnly: true,
      serviceAccount: h.loopServiceAccount,
      function: { url: stable, shadow: { url: buggy.url } },
    });
    for (const name of ['a1', 'a2', 'b1']) await createPod(name, 'shadowed');
    await eventually('the live version labelled every pod', async () => ['a1', 'a2', 'b1'].every((n) => labelOf(n) === n));

    const shown = await eventually('ShadowDiverged=True naming b1', async () => {
      const c = await condition(loop, 'ShadowDiverged');
      return c?.status === 'True' && c.message?.includes(`Pod ${ns}/b1`) && c;
    });
    expect(shown.reason).toBe('Diverged');
    expect(shown.message).toContain(BUGGY_LABEL.replace('/', '~1'));
    expect(await counterValue('shadowCalls', { loop, result: 'diverged' })).toBeGreaterThan(0);
    // The shadow's calls finish in any order: a1's and a2's agreements may be counted after b1's divergence.
    await eventually('the agreements counted', async () => (await counterValue('shadowCalls', { loop, result: 'agreed' })) > 0);

    // Recorded as a fixture pair: the same request with the live answer and with the shadow's.
    const folder = join(fixtures, loop);
    const files = await eventually('a fixture pair', async () => {
      const names = readdirSync(folder);
      return names.some((f) => f.endsWith('.shadow.json')) && names;
    });
    const shadowFile = files.find((f) => f.endsWith('.shadow.json'))!;
    const pair = [shadowFile, shadowFile.replace('.shadow.json', '.live.json')].map((f) => JSON.parse(readFileSync(join(folder, f), 'utf8')) as { request: { object: { metadata: { name: string } } }; response: unknown });
    expect(pair[0]!.request).toEqual(pair[1]!.request);
    expect(pair[0]!.request.object.metadata.name).toBe('b1');
    expect(JSON.stringify(pair[0]!.response)).toContain(BUGGY_LABEL.replace('/', '~1'));
    expect(JSON.stringify(pair[1]!.response)).not.toContain(BUGGY_LABEL.replace('/', '~1'));

    // Never applied: no pod ever carried the shadow's label.
    expect(labelsSeen.has(LABEL)).toBe(true);
    expect(labelsSeen.has(BUGGY_LABEL)).toBe(false);

    // The shadow removed: its condition goes with it.
    await h.client.request({ method: 'PATCH', path: `${LOOPS}/${loop}`, contentType: 'application/merge-patch+json', body: { spec: { function: { shadow: null } } } });
    await eventually('ShadowDiverged removed', async () => (await condition(loop, 'ShadowDiverged')) === undefined && (await condition(loop, 'Ready'))?.observedGeneration === 2);
  });
});

describe('a canary version', () => {
  let failing: Server;
  const received: string[] = [];
  beforeAll(async () => {
    // The canary answers every call with an error and remembers which primary it was asked about.
    failing = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const request = JSON.parse(body) as { object?: { metadata?: { namespace?: string; name?: string } } };
        received.push(`${request.object?.metadata?.namespace}/${request.object?.metadata?.name}`);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      });
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => failing?.close(resolve));
  });

  it('at 20 % that answers errors is rolled back by itself; only keys of its share reached it, and the stable version answers every key', async () => {
    const loop = `canary-${ns}`;
    // Names picked by the share function itself: three pods in the canary's 20 %, five outside it.
    const candidates = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const inShare = candidates.filter((n) => inCanaryShare(`${ns}/${n}`, 20)).slice(0, 3);
    const outside = candidates.filter((n) => !inCanaryShare(`${ns}/${n}`, 20)).slice(0, 5);
    expect(inShare).toHaveLength(3);
    for (const name of [...inShare, ...outside]) await createPod(name, 'canaried');
    const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/`;
    await h.createLoop(loop, {
      for: { apiVersion: 'v1', kind: 'Pod' },
      namespaces: [ns],
      selector: { matchLabels: { app: 'canaried' } },
      metadataOnly: true,
      serviceAccount: h.loopServiceAccount,
      function: { url: stable, canary: { url, weight: 20, errorBudget: { maxErrors: 2, windowSeconds: 600 } } },
    });

    const rolledBack = await eventually('CanaryRolledBack=True', async () => {
      const c = await condition(loop, 'CanaryRolledBack');
      return c?.status === 'True' && c;
    });
    expect(rolledBack.reason).toBe('ErrorBudgetSpent');
    await eventually('every pod labelled by the stable version', async () => [...inShare, ...outside].every((n) => labelOf(n) === n));
    expect(await counterValue('canaryRollbacks', { loop })).toBe(1);
    expect(await counterValue('canaryCalls', { loop, result: 'error' })).toBeGreaterThan(2);
    const warning = await eventually('a Warning event on the Loop', async () => {
      const list = await h.client.request<{ items: Array<{ type: string; reason: string; message: string }> }>({ path: '/api/v1/namespaces/default/events', query: { fieldSelector: `involvedObject.name=${loop}` } });
      return list.items.find((e) => e.type === 'Warning' && e.reason === 'CanaryRolledBack');
    });
    expect(warning.message).toContain('every key goes to the stable version');

    // Only keys of the canary's share ever reached it.
    expect(received.length).toBeGreaterThan(0);
    for (const key of received) expect(inShare.map((n) => `${ns}/${n}`)).toContain(key);

    // Afterwards every key goes to the stable version: the labels removed are written back, none by the canary.
    const before = received.length;
    const relabelled = async (what: string) => {
      const unlabelled = new Map<string, string | undefined>();
      for (const name of [...inShare, ...outside]) {
        const pod = await h.client.request<V1Pod>({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/pods/${name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [LABEL]: null } } } });
        unlabelled.set(name, pod.metadata?.resourceVersion);
      }
      // Labelled in a version after the one without the label: written anew, not the cache's old state.
      await eventually(what, async () =>
        [...unlabelled].every(([n, rv]) => {
          const pod = pods.store.get(`${ns}/${n}`);
          return pod?.metadata?.resourceVersion !== rv && pod?.metadata?.labels?.[LABEL] === n;
        }),
      );
    };
    await relabelled('every pod labelled again');
    expect(received.length).toBe(before);

    // A new router (a restart) reads the rollback back from the Loop: the same canary spec stays rolled back.
    await router.stop();
    router = await h.router(undefined, { loopSelector: h.loopSelector, shadowFixturesDir: fixtures });
    await router.waitForLoop(loop);
    await relabelled('every pod labelled by the new router');
    expect(received.length).toBe(before);
    expect((await condition(loop, 'CanaryRolledBack'))?.status).toBe('True');
  });
});
