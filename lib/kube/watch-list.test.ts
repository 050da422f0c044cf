// The informer's WatchList decisions: which request fills a cache, which bookmark ends the initial state, which
// answers mean the API server will not serve one, and that a refusal is remembered for its whole connection.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient } from './kube-client.ts';
import { initialRequest, isInitialEventsEnd, rememberWatchListRefused, refusesWatchList, watchListQuery, watchListRefusal } from './watch-list.ts';

const answer = (code: number, reason: string) => new KubeApiError(code, reason, 'x', { method: 'GET', path: '/api/v1/pods' });

describe('initialRequest', () => {
  it('asks for a WatchList unless turned off, refused by the server, or the informer lists a share', () => {
    expect(initialRequest({ enabled: true, refused: false, sharded: false })).toBe('watch-list');
    expect(initialRequest({ enabled: false, refused: false, sharded: false })).toBe('list');
    expect(initialRequest({ enabled: true, refused: true, sharded: false })).toBe('list');
    expect(initialRequest({ enabled: true, refused: false, sharded: true })).toBe('list');
  });
});

describe('watchListQuery', () => {
  it("asks as client-go does: initial events, not older than a consistent read (no resourceVersion), bookmarks on", () => {
    expect(watchListQuery()).toEqual({ watch: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
  });
});

describe('isInitialEventsEnd', () => {
  it('is the bookmark annotated k8s.io/initial-events-end: "true", no other event or bookmark', () => {
    const end = { metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    expect(isInitialEventsEnd('BOOKMARK', end)).toBe(true);
    expect(isInitialEventsEnd('BOOKMARK', { metadata: { resourceVersion: '9' } })).toBe(false);
    expect(isInitialEventsEnd('BOOKMARK', { metadata: { annotations: { 'k8s.io/initial-events-end': 'false' } } })).toBe(false);
    expect(isInitialEventsEnd('ADDED', end)).toBe(false);
    expect(isInitialEventsEnd('BOOKMARK', undefined)).toBe(false);
  });
});

describe('refusesWatchList', () => {
  it('is 400 or 422 (the feature off, or a server older than it); not 403, 410, 5xx or a network error', () => {
    expect(refusesWatchList(answer(422, 'Invalid'))).toBe(true);
    expect(refusesWatchList(answer(400, 'BadRequest'))).toBe(true);
    for (const [code, reason] of [[403, 'Forbidden'], [410, 'Expired'], [500, 'InternalError'], [503, 'ServiceUnavailable']] as const) expect(refusesWatchList(answer(code, reason))).toBe(false);
    expect(refusesWatchList(new Error('other side closed'))).toBe(false);
  });
});

describe('a refusal', () => {
  it('is remembered for the API server of a client and of every client impersonating through it, no other', async () => {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const root = await KubeClient.fromKubeConfig(config);
    const other = await KubeClient.fromKubeConfig(config);
    const tenant = root.impersonating({ user: 'system:serviceaccount:a:b' }, { qps: 1, burst: 1 });
    try {
      expect(watchListRefusal(tenant)).toBeUndefined();
      rememberWatchListRefused(tenant, 'sendInitialEvents is forbidden');
      expect([watchListRefusal(root), watchListRefusal(tenant), watchListRefusal(other)]).toEqual(['sendInitialEvents is forbidden', 'sendInitialEvents is forbidden', undefined]);
    } finally {
      await Promise.all([root.close(), other.close()]);
    }
  });
});
