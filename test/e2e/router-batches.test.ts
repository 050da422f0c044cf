// Batched calls through a real control plane: pods already there when the router starts are labelled by a
// runtime function over HTTP with fewer HTTP requests than calls (the first call alone, the rest in
// CloudEvents batches), and a poisoned pod whose call throws fails alone: retried, never labelled, while
// every other pod of its batches is labelled.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1PodList } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { toNodeHandler } from '../../lib/runtime/index.ts';
import { defineFunction } from '../../lib/sdk/index.ts';
import { reconcilePodNameLabel } from '../../functions/pod-name-label/reconcile.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const PODS = 12;
const POISONED = 'pod-poisoned';

let h: RouterHarness;
let server: Server;
let ns: string;
const seen = { requests: 0, batchRequests: 0, calls: 0, poisonedCalls: 0 };

const labeller = defineFunction({
  name: 'batch-labeller',
  reconcile(request) {
    seen.calls++;
    if (request.object.metadata?.name === POISONED) {
      seen.poisonedCalls++;
      throw new Error('poisoned pod');
    }
    return reconcilePodNameLabel(request, { annotation: ANNOTATION, label: LABEL });
  },
});

beforeAll(async () => {
  h = await routerHarness('router-batches');
  ns = h.suite.namespace;
  const handler = toNodeHandler(labeller, { logger: pino({ level: 'silent' }) });
  server = createServer((req, res) => {
    seen.requests++;
    if ((req.headers['content-type'] ?? '').startsWith('application/cloudevents-batch+json')) seen.batchRequests++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const names = [...Array.from({ length: PODS - 1 }, (_, i) => `pod-${i}`), POISONED];
  // All there before the router starts: its initial list makes every key ready at once.
  await Promise.all(
    names.map((name) =>
      h.client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods`,
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      }),
    ),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const router = await h.router([inlineLoop('batches', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url, maxConcurrency: 16, batch: { maxSize: 16 } } })]);
  await router.waitForLoop('batches');
});

afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

describe('batched calls', () => {
  it('labels every pod but the poisoned one with fewer HTTP requests than calls; the poisoned pod is retried alone', async () => {
    await eventually(`the ${PODS - 1} good pods labelled with their names`, async () => {
      const list = await h.client.request<V1PodList>({ path: `/api/v1/namespaces/${ns}/pods` });
      const labelled = list.items.filter((p) => p.metadata?.labels?.[LABEL] === p.metadata?.name).map((p) => p.metadata?.name);
      return labelled.length === PODS - 1 && labelled;
    });
    const atLabelled = { ...seen };
    expect(atLabelled.batchRequests).toBeGreaterThan(0);
    expect(atLabelled.requests).toBeLessThan(atLabelled.calls);
    // Backed off and called again on its own key; the others never waited for it.
    await eventually('the poisoned pod called again after its failure', async () => seen.poisonedCalls >= 2);
    const poisoned = await h.client.request<{ metadata?: { labels?: Record<string, string> } }>({ path: `/api/v1/namespaces/${ns}/pods/${POISONED}` });
    expect(poisoned.metadata?.labels?.[LABEL]).toBeUndefined();
  });
});
