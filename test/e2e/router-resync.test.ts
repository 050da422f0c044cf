// The periodic resync on the real API server: every primary in the Loop's cache is called again each
// spec.resyncPeriodSeconds with trigger RESYNC and its state as the cache holds it now, with no change to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
let served: ServedFunction;
const calls: ReconcileRequest[] = [];

beforeAll(async () => {
  h = await routerHarness('router-resync');
  ns = h.suite.namespace;
  served = await serveFunction(defineFunction({ name: 'resync-recorder', reconcile: (request: ReconcileRequest) => (calls.push(request), respond([])) }), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
});
afterAll(async () => {
  await h?.close();
  await served?.close();
});

const cms = () => `/api/v1/namespaces/${ns}/configmaps`;
const resyncsOf = (name: string) => calls.filter((c) => c.object.metadata?.name === name && c.trigger.type === 'RESYNC');

describe('resync', () => {
  it('calls each primary again every period with its current state, though nothing changed it', async () => {
    await h.client.request({ method: 'POST', path: cms(), body: { metadata: { name: 'steady', labels: { case: 'resync' } }, data: { v: '1' } } });
    await h.client.request({ method: 'POST', path: cms(), body: { metadata: { name: 'edited', labels: { case: 'resync' } }, data: { v: '1' } } });
    const router = await h.router([inlineLoop('resync', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { case: 'resync' } }, resyncPeriodSeconds: 1, function: { url: served.url } })]);
    await router.waitForLoop('resync');
    // 0.9-1.1 s apart: two resyncs of each within seconds, with no write to either.
    await eventually('two resyncs of each', async () => resyncsOf('steady').length >= 2 && resyncsOf('edited').length >= 2, 30_000);
    expect(resyncsOf('steady').every((c) => (c.object as { data?: Record<string, string> }).data?.v === '1')).toBe(true);
    // A resync after a change carries the changed state (from the cache the change's own event updated).
    await h.client.request({ method: 'PATCH', path: `${cms()}/edited`, contentType: 'application/merge-patch+json', body: { data: { v: '2' } } });
    const before = resyncsOf('edited').length;
    await eventually('a resync with v=2', async () => resyncsOf('edited').slice(before).some((c) => (c.object as { data?: Record<string, string> }).data?.v === '2'), 30_000);
  });
});
