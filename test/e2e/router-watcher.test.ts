// Seed 003 as its reader would try it: a Watcher gets its ConfigMap, which follows edits of configData.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

let h: RouterHarness;
let ns: string;

beforeAll(async () => {
  h = await routerHarness('router-watcher');
  ns = h.suite.namespace;
  await installCrds(h.client, ['watchers.watch.kubeloop.dev.yaml']);
  const fn = await h.serve('watcher');
  const router = await h.router([
    inlineLoop('watcher', ns, {
      for: { apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher' },
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      ignoreStatusChanges: true,
      function: { url: fn.url },
    }),
  ]);
  await router.waitForLoop('watcher');
});
afterAll(async () => h?.close());

describe('Watcher through the router', () => {
  it('creates the ConfigMap owned by the Watcher and keeps it in step with configData', async () => {
    const watchers = `/apis/watch.kubeloop.dev/v1alpha1/namespaces/${ns}/watchers`;
    const watcher = await h.client.request<{ metadata: { uid: string } }>({
      method: 'POST',
      path: watchers,
      body: {
        apiVersion: 'watch.kubeloop.dev/v1alpha1',
        kind: 'Watcher',
        metadata: { name: 'app' },
        spec: { container: { name: 'watch', image: 'busybox' }, configData: { 'app.conf': 'v1' } },
      },
    });
    const cmPath = `/api/v1/namespaces/${ns}/configmaps/app-config`;
    const first = await eventually('ConfigMap app-config with v1', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: cmPath });
      return cm.data?.['app.conf'] === 'v1' && cm;
    });
    expect(first.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Watcher', name: 'app', uid: watcher.metadata.uid, controller: true })]);

    await h.client.request({ method: 'PATCH', path: `${watchers}/app`, contentType: 'application/merge-patch+json', body: { spec: { configData: { 'app.conf': 'v2', extra: 'x' } } } });
    await eventually('ConfigMap follows the edit', async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: cmPath });
      return cm.data?.['app.conf'] === 'v2' && cm.data.extra === 'x';
    });

    // A hand edit of the ConfigMap is put back (the router sees the child change and calls the function).
    await h.client.request({ method: 'PATCH', path: cmPath, contentType: 'application/merge-patch+json', body: { data: { 'app.conf': 'tampered' } } });
    await eventually('hand edit reverted', async () => (await h.client.request<V1ConfigMap>({ path: cmPath })).data?.['app.conf'] === 'v2');
  });
});
