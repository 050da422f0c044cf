import { describe, expect, it } from 'vitest';
import { ApiServerNotReady, assertApiServerReady } from './api-server-ready.ts';
import { KubeApiError } from './kube-api-error.ts';

/** A client whose GET /readyz answers `ok` or fails with `error`, and which records what it was asked. */
function readyz(error?: Error): { requestText: (r: { path: string }) => Promise<string>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    requestText: async (request) => {
      asked.push(request.path);
      if (error) throw error;
      return 'ok';
    },
  };
}

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });

describe('assertApiServerReady', () => {
  it('resolves when GET /readyz answers', async () => {
    const client = readyz();
    await expect(assertApiServerReady(client)).resolves.toBeUndefined();
    expect(client.asked).toEqual(['/readyz']);
  });

  it.each([
    ['a starting server (500, an informer-sync check failing)', new KubeApiError(500, 'InternalError', '[-]informer-sync failed: reason withheld', { method: 'GET', path: '/readyz' })],
    ['a server shedding load (429)', new KubeApiError(429, 'TooManyRequests', 'storage is (re)initializing', { method: 'GET', path: '/readyz' })],
    ['a server not listening yet', refused],
  ])('throws ApiServerNotReady for %s, naming the answer', async (_what, error) => {
    const failure = await assertApiServerReady(readyz(error)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiServerNotReady);
    expect((failure as Error).message).toContain(error.message);
  });

  it('resolves when this process may not read /readyz (403): that says nothing about readiness', async () => {
    const forbidden = new KubeApiError(403, 'Forbidden', 'forbidden: User "system:serviceaccount:x:y" cannot get path "/readyz"', { method: 'GET', path: '/readyz' });
    await expect(assertApiServerReady(readyz(forbidden))).resolves.toBeUndefined();
  });
});
