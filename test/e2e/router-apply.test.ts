// Server-side apply and events from a function: an `apply` action lands with field manager kubeloop/<loop>
// and a controller ownerReference to the primary, follows later edits, and an `event` action becomes an
// events.k8s.io event about the primary.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, event, respond } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;
let served: ServedFunction;
let url: string;

beforeAll(async () => {
  h = await routerHarness('router-apply');
  ns = h.suite.namespace;
  // Keeps "<name>-copy" equal to the primary's data, by server-side apply; no credentials, no client.
  const copier = defineFunction({
    name: 'copier',
    reconcile: (request: ReconcileRequest) => {
      const source = request.object as V1ConfigMap & ReconcileRequest['object'];
      const name = `${source.metadata?.name}-copy`;
      return respond([
        { op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: source.data ?? {} } },
        event('Normal', 'Copied', `copied into ${name}`),
      ]);
    },
  });
  served = await serveFunction(copier, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  url = served.url;
});
afterAll(async () => {
  await h?.close();
  await served?.close();
});

describe('apply and event actions', () => {
  it('applies a child with the Loop field manager and owner, keeps it in step, and records the event', async () => {
    const router = await h.router([
      inlineLoop('copier', ns, {
        for: { apiVersion: 'v1', kind: 'ConfigMap' },
        owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
        selector: { matchLabels: { role: 'source' } },
        function: { url },
      }),
    ]);
    await router.waitForLoop('copier');
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    const source = await h.client.request<V1ConfigMap>({ method: 'POST', path: cms, body: { metadata: { name: 'src', labels: { role: 'source' } }, data: { a: '1' } } });
    const copy = await eventually('copy applied', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: `${cms}/src-copy` });
      return cm.data?.a === '1' && cm;
    });
    expect(copy.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: 'src', uid: source.metadata?.uid, controller: true })]);
    expect(copy.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toContainEqual(['kubeloop/copier', 'Apply']);

    await h.client.request({ method: 'PATCH', path: `${cms}/src`, contentType: 'application/merge-patch+json', body: { data: { a: '2', b: '3' } } });
    await eventually('copy follows', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: `${cms}/src-copy` });
      return cm.data?.a === '2' && cm.data.b === '3';
    });

    const events = await eventually('Copied event', async () => {
      const list = await h.client.request<{ items: Array<{ reason?: string; note?: string; reportingController?: string; regarding?: { name?: string; uid?: string } }> }>({
        path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      });
      const copied = list.items.filter((e) => e.reason === 'Copied');
      return copied.length > 0 && copied;
    });
    expect(events[0]).toMatchObject({ note: 'copied into src-copy', reportingController: 'kubeloop.dev/router', regarding: { name: 'src', uid: source.metadata?.uid } });
    // The same event is deduplicated, not written on every reconcile.
    expect(events).toHaveLength(1);
  });
});
