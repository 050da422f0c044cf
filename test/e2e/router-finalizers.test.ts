// Finalizers, deletes and recording: a Loop with finalize puts kubeloop.dev/<loop> on its primaries, sends
// their deletion with finalizing: true and removes the finalizer on finalized: true; sendDeletes delivers
// deleted primaries; --record writes fixtures that the replay loader accepts and that replay to the same reply.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFunction } from '../../functions/registry.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { compareResponses, isAdmissionFixture, loadFixtures } from '../../lib/replay/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
let served: ServedFunction;
let url: string;
const calls: ReconcileRequest[] = [];

beforeAll(async () => {
  h = await routerHarness('router-finalizers');
  ns = h.suite.namespace;
  // A function that records what it is sent and agrees to every finalization.
  const recorder = defineFunction({
    name: 'finalizer-recorder',
    reconcile: (request: ReconcileRequest) => {
      calls.push(request);
      return respond([], request.finalizing ? { finalized: true } : {});
    },
  });
  served = await serveFunction(recorder, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  url = served.url;
});
afterAll(async () => {
  await h?.close();
  await served?.close();
});

const cms = () => `/api/v1/namespaces/${ns}/configmaps`;
const callsFor = (name: string) => calls.filter((c) => c.object.metadata?.name === name);

describe('finalizers and deletes', () => {
  it('holds a deleted primary until the function answers finalized', async () => {
    const router = await h.router([
      inlineLoop('fin', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { case: 'fin' } }, finalize: true, function: { url } }),
    ]);
    await router.waitForLoop('fin');
    await h.client.request({ method: 'POST', path: cms(), body: { metadata: { name: 'held', labels: { case: 'fin' } } } });
    await eventually('finalizer added', async () => (await h.client.request<V1ConfigMap>({ path: `${cms()}/held` })).metadata?.finalizers?.includes('kubeloop.dev/fin'));
    await h.client.request({ method: 'DELETE', path: `${cms()}/held` });
    await eventually('object gone after finalization', async () => {
      try {
        await h.client.request({ path: `${cms()}/held` });
        return false;
      } catch (error) {
        return (error as { statusCode?: number }).statusCode === 404;
      }
    });
    const finalizing = callsFor('held').filter((c) => c.finalizing === true);
    expect(finalizing.length).toBeGreaterThanOrEqual(1);
    expect(finalizing[0]?.object.metadata?.deletionTimestamp).toBeDefined();
  });

  it('sends a deleted primary once with trigger DELETED when the Loop asks for deletes', async () => {
    const router = await h.router([
      inlineLoop('deletes', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { case: 'deletes' } }, sendDeletes: true, function: { url } }),
    ]);
    await router.waitForLoop('deletes');
    await h.client.request({ method: 'POST', path: cms(), body: { metadata: { name: 'bye', labels: { case: 'deletes' } } } });
    await eventually('first call', async () => callsFor('bye').length >= 1);
    await h.client.request({ method: 'DELETE', path: `${cms()}/bye` });
    await eventually('DELETED call', async () => callsFor('bye').some((c) => c.trigger.type === 'DELETED'));
    expect(callsFor('bye').filter((c) => c.trigger.type === 'DELETED')).toHaveLength(1);
  });
});

describe('--record', () => {
  it('writes fixtures the replay loader accepts and the function answers the same way again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-record-'));
    const fn = await h.serve('pod-name-label');
    const router = await h.router(
      [inlineLoop('recorded', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, selector: { matchLabels: { case: 'record' } }, metadataOnly: true, function: { url: fn.url } })],
      { recordDir: dir },
    );
    await router.waitForLoop('recorded');
    await h.client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: { metadata: { name: 'rec', labels: { case: 'record' }, annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const fixtures = await eventually('a fixture with the label patch', async () => {
      const loaded = loadFixtures(dir);
      return loaded.some((f) => f.ok && !isAdmissionFixture(f.fixture) && f.fixture.response.actions.some((a) => a.op === 'patch')) && loaded;
    });
    const definition = await loadFunction('pod-name-label');
    for (const loaded of fixtures) {
      if (!loaded.ok || isAdmissionFixture(loaded.fixture)) throw new Error(`${loaded.file}: ${loaded.ok ? 'an admission fixture' : loaded.error}`);
      expect(loaded.fixture.description).toMatch(/^recorded: /);
      expect(compareResponses(loaded.fixture.response, definition.reconcile(loaded.fixture.request))).toEqual([]);
    }
  });
});
