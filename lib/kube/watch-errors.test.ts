import { describe, expect, it } from 'vitest';
import { WatchGoneError, watchErrorEvent } from './watch-errors.ts';

describe('watchErrorEvent', () => {
  it('reads 410 Gone and Expired as a reason to relist, any other status as an error naming it', () => {
    for (const status of [{ code: 410, message: 'too old resource version: 5 (9)' }, { reason: 'Expired' }, { reason: 'Gone' }]) {
      expect(watchErrorEvent('v1/Pod', status)).toBeInstanceOf(WatchGoneError);
    }
    expect(watchErrorEvent('v1/Pod', { code: 410, message: 'too old' }).message).toBe('watch of v1/Pod: too old');
    const other = watchErrorEvent('v1/Pod', { code: 500, reason: 'InternalError', message: 'etcd down' });
    expect(other).not.toBeInstanceOf(WatchGoneError);
    expect(other.message).toBe('watch of v1/Pod: error event 500 InternalError: etcd down');
  });
});
