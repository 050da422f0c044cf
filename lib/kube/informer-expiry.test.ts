// The informer's answer to 410 Gone: relist at once, but back off when the watch after a relist expires again
// before it brings anything, so a server that expires every watch never gets a hot loop of full lists.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Informer } from './informer.ts';
import type { KubeClient } from './kube-client.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const line = (event: unknown) => `${JSON.stringify(event)}\n`;
const EXPIRED = line({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' } });
const BOOKMARK = line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });

/** A server whose watch number n (1-based) sends watches[n-1] (the last one from then on), chunk by chunk. */
function server(watches: string[][]) {
  let lists = 0;
  let watched = 0;
  const client = {
    requestText: () => {
      lists += 1;
      // Without a backoff the loop would never yield to the fake clock: fail instead of hanging.
      if (lists > 20) return Promise.reject(new Error('hot relist loop'));
      return Promise.resolve(JSON.stringify({ metadata: { resourceVersion: String(lists) }, items: [] }));
    },
    streamResponse: () => Promise.resolve({ body: Readable.from(watches[Math.min(watched++, watches.length - 1)] ?? []), contentType: 'application/json;stream=watch' }),
  } as unknown as KubeClient;
  return { client, lists: () => lists };
}

let informer: Informer | undefined;
beforeEach(() => vi.useFakeTimers());
afterEach(async () => {
  await informer?.stop();
  vi.useRealTimers();
});

function start(client: KubeClient): string[] {
  const restarts: string[] = [];
  informer = new Informer({ client, resource, watchList: false, backoff: { baseMs: 1000, maxMs: 8000, jitter: 0 } });
  informer.on('restart', (reason) => restarts.push(reason));
  informer.start();
  return restarts;
}

describe('Informer on 410 Gone', () => {
  it('relists at once, then backs off while every watch after a relist expires at once', async () => {
    const s = server([[EXPIRED]]);
    const restarts = start(s.client);
    await vi.advanceTimersByTimeAsync(0);
    // The first list, the relist at once after the first 410; the second 410 waits the backoff.
    expect(s.lists()).toBe(2);
    expect(restarts).toEqual(['gone', 'gone']);
    await vi.advanceTimersByTimeAsync(1999);
    expect(s.lists()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.lists()).toBe(3);
    // Growing: the next relist is 4 s later.
    await vi.advanceTimersByTimeAsync(3999);
    expect(s.lists()).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.lists()).toBe(4);
  });

  it('relists at once again after a watch that brought something before its 410', async () => {
    const s = server([[BOOKMARK, EXPIRED], [BOOKMARK, EXPIRED], [EXPIRED]]);
    const restarts = start(s.client);
    await vi.advanceTimersByTimeAsync(0);
    // Two watches that worked, each relisted at once; the third expired at once and waits.
    expect(s.lists()).toBe(3);
    expect(restarts).toEqual(['gone', 'gone', 'gone']);
    expect(informer?.resourceVersion).toBe('3');
  });
});
