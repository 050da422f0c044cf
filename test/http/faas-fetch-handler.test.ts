// docs/deploy.md, "Web fetch handler": pod-name-label served as (Request) => Promise<Response>, the shape
// FaaS platforms call, answers the same as the HTTP server for recorded requests.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { toFetchHandler } from '../../lib/runtime/index.ts';
import { loadFunction } from '../../functions/registry.ts';

interface Fixture {
  request: ReconcileRequest;
  response: ReconcileResponse;
}

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/pod-name-label/${name}.json`, import.meta.url), 'utf8')) as Fixture;
}

async function handler(): Promise<(request: Request) => Promise<Response>> {
  // The exact lines docs/deploy.md shows for a fetch-handler deployment.
  const podNameLabel = await loadFunction('pod-name-label');
  return toFetchHandler(podNameLabel, { logLevel: 'silent' });
}

function post(body: string, contentType = 'application/json'): Request {
  return new Request('https://fn.example.com/reconcile', { method: 'POST', headers: { 'content-type': contentType }, body });
}

describe('pod-name-label as a Web fetch handler', () => {
  it('answers a recorded ReconcileRequest with the recorded actions', async () => {
    const fetchHandler = await handler();
    const { request, response } = fixture('adds-label-to-annotated-pod');
    const reply = await fetchHandler(post(JSON.stringify(request)));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/application\/json/);
    expect(await reply.json()).toEqual(response);
  });

  it('answers a pod that is already right with no actions', async () => {
    const fetchHandler = await handler();
    const { request, response } = fixture('no-action-when-already-labelled');
    const reply = await fetchHandler(post(JSON.stringify(request)));
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as ReconcileResponse;
    expect(body.actions).toEqual([]);
    expect(body).toEqual(response);
  });

  it('rejects a body that is not a ReconcileRequest with a 400 and a message', async () => {
    const fetchHandler = await handler();
    const reply = await fetchHandler(post(JSON.stringify({ kind: 'Something' })));
    expect(reply.status).toBe(400);
    const body = (await reply.json()) as { message?: string };
    expect(body.message).toMatch(/\S/);
  });

  it('serves the health endpoint platforms probe', async () => {
    const fetchHandler = await handler();
    const reply = await fetchHandler(new Request('https://fn.example.com/healthz'));
    expect(reply.status).toBe(200);
  });
});
