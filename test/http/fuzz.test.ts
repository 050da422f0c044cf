// A seeded, bounded property-based fuzz run (fast-check) over real sockets: malformed reconcile requests
// against the function runtime (plain, CloudEvents, signed) and malformed AdmissionReviews against the
// webhook gateway over HTTPS (the Watcher sidecar hook and its function), DELETE reviews with a malformed
// oldObject among them. Every malformed input gets a
// 4xx, nothing gets a 5xx, the servers stay up and RSS
// stays bounded. KUBELOOP_FUZZ_RUNS (default 150 per property) and KUBELOOP_FUZZ_SEED widen or replay it:
// `npm run test:fuzz` runs 5,000.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateReconcileRequest } from '../../lib/contract/validate.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { generateSigningSecret, parseSigningSecret, signRequest } from '../../lib/signing/webhook-signature.ts';
import { startWatcherSidecarGateway, type WatcherSidecarGateway } from './watcher-sidecar-gateway.ts';
import { exampleFunction, podRequest } from './example-function.ts';

const RUNS = Number(process.env.KUBELOOP_FUZZ_RUNS ?? 150);
const SEED = Number(process.env.KUBELOOP_FUZZ_SEED ?? 20261123);
const logger = createLogger({ name: 'fuzz', level: 'silent' });
const SECRET = generateSigningSecret();
const statuses = new Map<string, number>();
let inputs = 0;
let fn: ServedFunction;
let signedFn: ServedFunction;
let webhook: WatcherSidecarGateway;
let webhookUrl = '';
let agent: Agent;
let rssStart = 0;

beforeAll(async () => {
  fn = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: 256 * 1024 });
  signedFn = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger, signingSecret: SECRET });
  webhook = await startWatcherSidecarGateway(logger, { bodyLimitBytes: 256 * 1024 });
  webhookUrl = webhook.url;
  agent = new Agent({ connect: { ca: webhook.bundle.ca.certPem } });
  rssStart = process.memoryUsage().rss;
});
afterAll(async () => {
  const rssGrowthMiB = Math.round((process.memoryUsage().rss - rssStart) / 1024 / 1024);
  const counts = Object.fromEntries([...statuses].sort());
  console.log(`fuzz: seed ${SEED}, ${inputs} inputs, statuses ${JSON.stringify(counts)}, RSS growth ${rssGrowthMiB} MiB`);
  await fn?.close();
  await signedFn?.close();
  await webhook?.close();
  await agent?.close();
});

async function send(target: string, name: string, headers: Record<string, string>, body: string, dispatcher?: Agent): Promise<number> {
  const reply = await request(target, { method: 'POST', headers, body, ...(dispatcher ? { dispatcher } : {}) });
  await reply.body.dump();
  inputs++;
  statuses.set(`${name} ${reply.statusCode}`, (statuses.get(`${name} ${reply.statusCode}`) ?? 0) + 1);
  return reply.statusCode;
}

/** A valid document with one field (at any depth, or under `under`) replaced by an arbitrary JSON value or removed. */
function mutated(valid: unknown, under: string[] = []): fc.Arbitrary<unknown> {
  const paths: string[][] = [];
  const walk = (value: unknown, path: string[]) => {
    paths.push(path);
    if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
  };
  walk(valid, []);
  const inside = (p: string[]) => p.length > under.length && under.every((key, i) => p[i] === key);
  return fc.tuple(fc.constantFrom(...paths.filter(inside)), fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined })).map(([path, value]) => {
    const copy = structuredClone(valid) as Record<string, unknown>;
    let node = copy;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
    const last = path.at(-1)!;
    if (value === undefined) delete node[last];
    else node[last] = value;
    return copy;
  });
}

const garbage = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.nat({ max: 2000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);
const contentTypes = fc.constantFrom('application/json', 'application/cloudevents+json', 'text/plain', 'application/json; charset=utf-8', '');
const params = { seed: SEED, numRuns: RUNS, endOnFailure: true };

describe('fuzzing the function runtime', () => {
  it('answers garbage bodies under any content type with a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(garbage, contentTypes, async (body, type) => {
        const status = await send(`${fn.url}/`, 'function', type ? { 'content-type': type } : {}, body);
        expect(status).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(500);
      }),
      params,
    );
  });

  it('answers mutated requests (plain and binary CloudEvents) with 200 when still valid, else a 4xx', async () => {
    const ce = { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/fuzz', 'ce-type': 'dev.kubeloop.reconcile.v1' };
    await fc.assert(
      fc.asyncProperty(mutated(podRequest()), fc.boolean(), async (candidate, binary) => {
        const status = await send(`${fn.url}/`, 'function', { 'content-type': 'application/json', ...(binary ? ce : {}) }, JSON.stringify(candidate));
        expect(status).toBe(validateReconcileRequest(candidate).ok ? 200 : 400);
      }),
      params,
    );
  });

  it('refuses every request whose signature headers do not match with 401', async () => {
    const key = parseSigningSecret(SECRET);
    const body = JSON.stringify(podRequest());
    const good = signRequest(key, 'loop/fuzz', body);
    const header = fc.constantFrom<keyof typeof good>('webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-kubeloop-audience');
    await fc.assert(
      fc.asyncProperty(header, fc.string({ maxLength: 120 }).filter((v) => /^[\t\x20-\x7e]*$/.test(v)), async (name, value) => {
        fc.pre(value !== good[name]);
        const status = await send(`${signedFn.url}/`, 'signed', { 'content-type': 'application/json', ...good, [name]: value }, body);
        expect(status).toBe(401);
      }),
      params,
    );
  });
});

describe('fuzzing the webhook', () => {
  const review = JSON.parse(readFileSync(new URL('../fixtures/admission/pod-create-annotated.json', import.meta.url), 'utf8')) as unknown;

  it('answers garbage with a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(garbage, async (body) => {
        const status = await send(webhookUrl, 'webhook', { 'content-type': 'application/json' }, body, agent);
        expect(status).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(500);
      }),
      params,
    );
  });

  it('answers mutated AdmissionReviews with a review (200) or a 4xx, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(mutated(review), async (candidate) => {
        const status = await send(webhookUrl, 'webhook', { 'content-type': 'application/json' }, JSON.stringify(candidate), agent);
        expect(status === 200 || (status >= 400 && status < 500)).toBe(true);
      }),
      params,
    );
  });

  it('answers DELETE reviews with a malformed oldObject (the object being deleted) with a review or a 4xx, never a 5xx', async () => {
    const { request: create } = review as { request: Record<string, unknown> };
    const deletion = { ...(review as object), request: { ...create, operation: 'DELETE', object: null, oldObject: create.object } };
    await fc.assert(
      fc.asyncProperty(mutated(deletion, ['request', 'oldObject']), async (candidate) => {
        const status = await send(webhookUrl, 'webhook', { 'content-type': 'application/json' }, JSON.stringify(candidate), agent);
        expect(status === 200 || (status >= 400 && status < 500)).toBe(true);
      }),
      params,
    );
  });

  it('kept both servers up and memory bounded', async () => {
    expect((await request(`${fn.url}/healthz`)).statusCode).toBe(200);
    expect((await request(webhookUrl.replace('/admit/watcher-sidecar', '/healthz'), { dispatcher: agent })).statusCode).toBe(200);
    expect(process.memoryUsage().rss - rssStart).toBeLessThan(200 * 1024 * 1024);
  });
});
