// Inputs that once got a 500 (or crashed a recursive copy) now get a clear 4xx, over real HTTP: the
// function runtime (deep nesting, a value bomb, non-string name/namespace, a non-string CloudEvent datacontenttype)
// and the webhook gateway over HTTPS, on the Watcher sidecar hook (a non-string Watcher annotation).
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { startWatcherSidecarGateway, type WatcherSidecarGateway } from './watcher-sidecar-gateway.ts';
import { WATCHER_ANNOTATION } from '../../api/watcher.ts';
import { exampleFunction, podRequest } from './example-function.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const deep = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
let fn: ServedFunction;
let webhook: WatcherSidecarGateway;
let webhookUrl = '';
let agent: Agent;

beforeAll(async () => {
  fn = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger });
  webhook = await startWatcherSidecarGateway(logger);
  webhookUrl = webhook.url;
  agent = new Agent({ connect: { ca: webhook.bundle.ca.certPem } });
});
afterAll(async () => {
  await fn.close();
  await webhook.close();
  await agent.close();
});

const base = JSON.stringify(podRequest());
const withMetadata = (field: string, value: unknown) => {
  const request = podRequest();
  return JSON.stringify({ ...request, object: { ...request.object, metadata: { ...request.object.metadata, [field]: value } } });
};

describe('the function runtime answers 4xx, not 500', () => {
  it.each([
    ['a spec nested 100,000 deep', 'application/json', {}, base.replace('"spec":{', `"spec":{"deep":${deep(100_000)},`), /nests deeper than 256 levels/],
    ['a label value nested 300 deep', 'application/json', {}, base.replace('"labels":{', `"labels":{"x":${deep(300)},`), /nests deeper than 256 levels/],
    ['a number as metadata.name', 'application/json', {}, withMetadata('name', 5), /\/object\/metadata\/name must be string/],
    ['an object as metadata.namespace', 'application/json', {}, withMetadata('namespace', { a: 1 }), /\/object\/metadata\/namespace must be string/],
    [
      'a number as CloudEvent datacontenttype',
      'application/cloudevents+json',
      {},
      JSON.stringify({ specversion: '1.0', id: '1', source: '/x', type: 'dev.kubeloop.reconcile.v1', datacontenttype: 5, data: podRequest() }),
      /datacontenttype 5 is not supported/,
    ],
  ])('%s', async (_case, contentType, headers, body, message) => {
    const reply = await request(`${fn.url}/`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });
    expect(reply.statusCode).toBe(400);
    expect(((await reply.body.json()) as { message: string }).message).toMatch(message);
  });
});

describe('the function runtime counts JSON values before parsing', () => {
  it('refuses 4 MiB of empty objects (1.4 million values) with 413, before JSON.parse builds them', async () => {
    const bomb = base.replace('"spec":{', `"spec":{"pad":[${'{},'.repeat(1_400_000)}{}],`);
    const reply = await request(`${fn.url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bomb });
    expect(reply.statusCode).toBe(413);
    expect(await reply.body.json()).toMatchObject({ code: 'PayloadTooLarge', message: 'request body holds more than 200000 JSON values; refused before parsing' });
  });
});

describe('the webhook answers 400, not 500', () => {
  const review = JSON.parse(readFileSync(new URL('../fixtures/admission/pod-create-annotated.json', import.meta.url), 'utf8')) as {
    request: { object: { metadata: Record<string, unknown> } };
  };
  it.each([
    ['a number as the Watcher annotation', (m: Record<string, unknown>) => (m.annotations = { [WATCHER_ANNOTATION]: 7 }), /annotations\["watch.kubeloop.dev\/watcher"\] must be a string/],
    ['an object as metadata.name', (m: Record<string, unknown>) => (m.name = { a: 1 }), /metadata.name must be a string/],
    ['an array as labels', (m: Record<string, unknown>) => (m.labels = ['a']), /metadata.labels must be an object of strings/],
  ])('%s', async (_case, mutate, message) => {
    const body = structuredClone(review);
    mutate(body.request.object.metadata);
    const reply = await request(webhookUrl, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(reply.statusCode).toBe(400);
    expect(((await reply.body.json()) as { message: string }).message).toMatch(message);
  });
});
