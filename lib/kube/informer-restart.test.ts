import { describe, expect, it } from 'vitest';
import { afterFailure, notSyncedError } from './informer-restart.ts';
import { KubeApiError, KubeClientClosedError } from './kube-client.ts';
import { ReshardError, SilentWatchError, WatchGoneError } from './watch-errors.ts';
import { WatchListRefusedError } from './watch-list.ts';

const request = { method: 'GET', path: '/api/v1/configmaps' };

describe('afterFailure', () => {
  it('ends the loop when the KubeClient was closed, whether the request was cut short or never sent', () => {
    expect(afterFailure(new KubeClientClosedError(request, true), 0)).toEqual({ step: 'end' });
    expect(afterFailure(new KubeClientClosedError(request, false), 3)).toEqual({ step: 'end' });
  });

  it('lists at once for a new share or a refused WatchList, without a restart', () => {
    expect(afterFailure(new ReshardError('share changed'), 0)).toEqual({ step: 'list-share' });
    expect(afterFailure(new WatchListRefusedError('sendInitialEvents is forbidden'), 0)).toEqual({ step: 'list-instead' });
  });

  it('relists at once on the first 410 in a row, and after the expiries backoff on the next ones', () => {
    const gone = { step: 'restart', reason: 'gone', relist: true, backoff: 'expiries' };
    expect(afterFailure(new WatchGoneError('too old'), 0)).toEqual({ ...gone, atOnce: true });
    expect(afterFailure(new KubeApiError(410, 'Expired', 'too old', request), 0)).toEqual({ ...gone, atOnce: true });
    expect(afterFailure(new WatchGoneError('too old'), 1)).toEqual({ ...gone, atOnce: false });
  });

  it('restarts after the failures backoff, resuming, on a silent watch or any other error', () => {
    const restart = { step: 'restart', relist: false, backoff: 'failures', atOnce: false };
    expect(afterFailure(new SilentWatchError('went silent'), 0)).toEqual({ ...restart, reason: 'silent' });
    expect(afterFailure(new KubeApiError(403, 'Forbidden', 'no', request), 0)).toEqual({ ...restart, reason: 'error' });
    expect(afterFailure(new Error('other side closed'), 2)).toEqual({ ...restart, reason: 'error' });
  });
});

describe('notSyncedError', () => {
  it('says the KubeClient was closed when that ended the informer, with its error as the cause', () => {
    const closed = new KubeClientClosedError(request, false);
    const error = notSyncedError('ConfigMap.v1', closed);
    expect([error.message, error.cause]).toEqual(['informer ConfigMap.v1 stopped before it synced: its KubeClient was closed', closed]);
    expect(notSyncedError('ConfigMap.v1', new Error('informer stopped')).message).toBe('informer ConfigMap.v1 stopped before it synced');
  });
});
