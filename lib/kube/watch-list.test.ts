// The informer's WatchList decisions: which request fills a cache, which bookmark ends the initial state, which
// answers mean the API server will not serve one, and that a refusal is remembered for its whole connection.
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient } from './kube-client.ts';
import { endedBeforeItsEnd, initialRequest, isInitialEventsEnd, rememberWatchListRefused, refusesWatchList, watchListQuery, watchListRefusal } from './watch-list.ts';

const answer = (code: number, reason: string, message = 'x') => new KubeApiError(code, reason, message, { method: 'GET', path: '/api/v1/pods' });

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
  it("is a 400 or 422 naming the WatchList's parameters (the feature off, a server older than it); no other answer or error", () => {
    expect(refusesWatchList(answer(422, 'Invalid', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'))).toBe(true);
    expect(refusesWatchList(answer(400, 'BadRequest', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch'))).toBe(true);
    // A bad selector is the Loop's, and a list would get the same answer: not the server's refusal.
    expect(refusesWatchList(answer(400, 'BadRequest', 'unable to parse requirement: invalid label key'))).toBe(false);
    for (const [code, reason] of [[403, 'Forbidden'], [410, 'Expired'], [500, 'InternalError'], [503, 'ServiceUnavailable']] as const) expect(refusesWatchList(answer(code, reason))).toBe(false);
    expect(refusesWatchList(new Error('other side closed'))).toBe(false);
  });
});

describe('endedBeforeItsEnd', () => {
  it("is an ignored WatchList when the server ended it at its timeout, else an early end to ask again", () => {
    expect(endedBeforeItsEnd(300_000, 300)).toBe('ignored');
    expect(endedBeforeItsEnd(299_999, 300)).toBe('ended early');
    expect(endedBeforeItsEnd(50, 300)).toBe('ended early');
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
