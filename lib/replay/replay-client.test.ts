import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineFunction, respond } from '../sdk/index.ts';
import { generateSigningSecret, parseSigningSecrets } from '../signing/webhook-signature.ts';
import { serveForTest, type TestServer } from '../testing/serve.ts';
import { callFunction } from './replay-client.ts';
import type { ReconcileRequest } from '../contract/types.ts';

const secret = generateSigningSecret();
const nothingToDo = defineFunction({ name: 'nothing-to-do', reconcile: () => respond([]) });
let server: TestServer;
const request: ReconcileRequest = {
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileRequest',
  loop: 'nothing-to-do',
  trigger: { type: 'RESYNC' },
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', resourceVersion: '1' } },
  children: {},
  now: '2026-01-01T00:00:00Z',
};

beforeAll(async () => {
  server = await serveForTest(nothingToDo, { signingSecret: secret });
});
afterAll(async () => server?.close());

describe('callFunction against a function that requires signed requests', () => {
  it('is refused unsigned, and answered when signed with the Loop\'s key as the router signs', async () => {
    const unsigned = await callFunction(request, { url: `${server.url}/` });
    expect(unsigned).toMatchObject({ ok: false, message: expect.stringMatching(/^HTTP 401/) });
    const signed = await callFunction(request, { url: `${server.url}/`, signingKeys: parseSigningSecrets(secret) });
    expect(signed).toMatchObject({ ok: true, response: { kind: 'ReconcileResponse', actions: [] } });
  });
});
