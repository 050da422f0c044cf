import { describe, expect, it } from 'vitest';
import { shardSlot, type ListedShard } from '../../lib/kube/shard-selector.ts';
import { MemberShare } from './member-share.ts';

const object = (uid: string) => ({ metadata: { uid } });
/** uids as the API server makes them vary from the first character on (FNV-1a spreads those well). */
const uids = Array.from({ length: 50 }, (_, i) => `${String(i * 7919).padStart(8, '0')}-5f3c-4c2e-9d1a-0242ac120002`);
const [u0, u1, u2] = uids.filter((u, i) => uids.findIndex((v) => shardSlot(v) === shardSlot(u)) === i) as [string, string, string];

describe('MemberShare', () => {
  it('asks for the slots of its target view and tests objects against exactly that request', () => {
    const share = new MemberShare();
    expect(share.request()).toBeUndefined();
    const changes: number[] = [];
    share.onChange(() => changes.push(1));
    const mine = [shardSlot(u0), shardSlot(u1)];
    share.set(mine, 'view-1');
    const request = share.request()!;
    expect(request.selector).toContain('shardRange(object.metadata.uid, ');
    expect(uids.filter((u) => request.contains(object(u)))).toEqual(uids.filter((u) => mine.includes(shardSlot(u))));
    // The same slots under another view: nothing to list again.
    share.set(mine, 'view-2');
    expect(changes).toHaveLength(1);
    share.set([shardSlot(u2)], 'view-3');
    expect(changes).toHaveLength(2);
    // A request already handed out keeps testing against its own slots.
    expect(request.contains(object(u0))).toBe(true);
    expect(share.request()!.contains(object(u0))).toBe(false);
    expect(share.request()!.contains(object(u2))).toBe(true);
  });

  it('holds a view once every cache listed its selector, or got everything from the server', () => {
    const share = new MemberShare();
    let listed: ListedShard | undefined;
    share.track({ listedShard: () => listed });
    share.set([1, 2], 'v1');
    expect(share.covers('v1')).toBe(true);
    expect(share.covers('v0')).toBe(false);
    listed = { selector: share.request()!.selector, applied: true };
    expect(share.mode()).toBe('server');
    share.set([3], 'v2');
    expect(share.covers('v2')).toBe(false);
    listed = { selector: share.request()!.selector, applied: true };
    expect(share.covers('v2')).toBe(true);
    listed = { selector: 'an older one', applied: false };
    expect(share.covers('v2')).toBe(true);
    expect(share.mode()).toBe('client');
  });
});
