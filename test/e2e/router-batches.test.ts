// Batched calls through a real control plane: pods already there when the router starts are labelled by a
// runtime function over HTTP with fewer HTTP requests than calls (the first wave alone, the calls after its
// replies advertised batches in CloudEvents batches, gathered within the Loop's windowMs), and a poisoned pod
// whose call throws fails alone: retried, never labelled, while every other pod of its batches is labelled. A
// second Loop calls a function that knows nothing of batches (it would refuse one with 415): it never receives
// one, and every one of its pods is labelled. A third Loop, with two workers for its backlog, sends batches
// longer than its workers: each worker carried several keys, whose calls went together.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1PodList } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import type { Router } from '../../router/index.ts';
import { toNodeHandler } from '../../lib/runtime/index.ts';
import { defineFunction } from '../../lib/sdk/index.ts';
import { reconcilePodNameLabel } from '../../functions/pod-name-label/reconcile.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { closeServer } from '../support/close-server.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const PODS = 12;
const PLAIN_PODS = 6;
const GROUPED_PODS = 10;
const POISONED = 'pod-poisoned';
const GROUP = 'kubeloop.dev/test-group';

let h: RouterHarness;
let router: Router;
let server: Server;
let plain: Server;
let ns: string;
const seen = { requests: 0, batchRequests: 0, calls: 0, poisonedCalls: 0 };
const plainSeen = { singles: 0, batchRequests: 0 };
const isBatch = (contentType: string | undefined) => (contentType ?? '').startsWith('application/cloudevents-batch+json');

/** A function written before batches: one ReconcileRequest per request (CloudEvents binary mode), 415 for anything else. */
function plainFunction(): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
        plainSeen.batchRequests += isBatch(req.headers['content-type']) ? 1 : 0;
        res.writeHead(415, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 415, code: 'UnsupportedMediaType', message: 'one request per call' }));
        return;
      }
      plainSeen.singles++;
      const response = reconcilePodNameLabel(JSON.parse(body) as ReconcileRequest, { annotation: ANNOTATION, label: LABEL });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
    });
  });
}

const listening = async (s: Server) => {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
};

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
    if (isBatch(req.headers['content-type'])) seen.batchRequests++;
    handler(req, res);
  });
  plain = plainFunction();
  const [url, plainUrl] = [await listening(server), await listening(plain)];
  const pods = [
    ...[...Array.from({ length: PODS - 1 }, (_, i) => `pod-${i}`), POISONED].map((name) => ({ name, group: 'batches' })),
    ...Array.from({ length: PLAIN_PODS }, (_, i) => ({ name: `plain-${i}`, group: 'plain' })),
    ...Array.from({ length: GROUPED_PODS }, (_, i) => ({ name: `grouped-${i}`, group: 'grouped' })),
  ];
  // All there before the router starts: its initial list makes every key ready at once.
  await Promise.all(
    pods.map(({ name, group }) =>
      h.client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods`,
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { [GROUP]: group }, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      }),
    ),
  );
  // Fewer workers than pods: the first wave (one call per worker) goes alone, the rest after its replies.
  const loop = (name: string, group: string, functionUrl: string, fn: Record<string, unknown> = { maxConcurrency: 4, batch: { maxSize: 16, windowMs: 50 } }) =>
    inlineLoop(name, ns, { for: { apiVersion: 'v1', kind: 'Pod' }, selector: { matchLabels: { [GROUP]: group } }, metadataOnly: true, function: { url: functionUrl, ...fn } });
  // Two workers, no gathering window: without groups of keys a batch could hold two calls at most.
  const grouped = loop('grouped', 'grouped', url, { maxConcurrency: 2, batch: { maxSize: 16 } });
  router = await h.router([loop('batches', 'batches', url), loop('plain', 'plain', plainUrl), grouped]);
  await router.waitForLoop('batches');
  await router.waitForLoop('plain');
  await router.waitForLoop('grouped');
});

afterAll(async () => {
  await h?.close();
  if (server) await closeServer(server);
  await new Promise((resolve) => (plain ? plain.close(resolve) : resolve(undefined)));
});

const labelledOf = async (group: string) => {
  const list = await h.client.request<V1PodList>({ path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: `${GROUP}=${group}` } });
  return list.items.filter((p) => p.metadata?.labels?.[LABEL] === p.metadata?.name).map((p) => p.metadata?.name);
};

describe('batched calls', () => {
  it('labels every pod but the poisoned one with fewer HTTP requests than calls; the poisoned pod is retried alone', async () => {
    await eventually(`the ${PODS - 1} good pods labelled with their names`, async () => {
      const labelled = await labelledOf('batches');
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

  it('calls a function that knows nothing of batches once per pod, never with a batch, and labels every pod', async () => {
    await eventually(`the ${PLAIN_PODS} pods of the plain function labelled`, async () => {
      const labelled = await labelledOf('plain');
      return labelled.length === PLAIN_PODS && labelled;
    });
    expect(plainSeen.batchRequests).toBe(0);
    expect(plainSeen.singles).toBeGreaterThanOrEqual(PLAIN_PODS);
  });

  it('sends a backlog more calls per request than the Loop has workers: each worker carried several keys', async () => {
    await eventually(`the ${GROUPED_PODS} pods of the two-worker Loop labelled`, async () => {
      const labelled = await labelledOf('grouped');
      return labelled.length === GROUPED_PODS && labelled;
    });
    const sizes = await router.metrics.registry.getSingleMetric('kubeloop_router_function_batch_size')?.get();
    const values = (sizes?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
    const ofLoop = values.filter((v) => v.labels.loop === 'grouped');
    const count = ofLoop.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    const upToTwo = ofLoop.find((v) => v.metricName?.endsWith('_bucket') && v.labels.le === 2)?.value ?? 0;
    // Batches of more than two calls: two workers, each carrying keys that waited with no free worker to take them.
    expect(count).toBeGreaterThan(upToTwo);
  });
});
