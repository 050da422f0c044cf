import { describe, expect, it } from 'vitest';
import { fnv1a64Hex, serverApplied, shardSelector, shardSlot, SLOTS, slotRuns, type ShardRequest } from './shard-selector.ts';

describe('fnv1a64', () => {
  it('hashes as Go hash/fnv New64a (the API server sharding.HashField)', () => {
    // Printed by Go 1.26: h := fnv.New64a(); h.Write([]byte(s)); fmt.Printf("%016x", h.Sum64())
    expect(fnv1a64Hex('')).toBe('cbf29ce484222325');
    expect(fnv1a64Hex('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64Hex('foobar')).toBe('85944171f73967e8');
    expect(fnv1a64Hex('3f2a1c9e-8b7d-4e6f-9a0b-1c2d3e4f5a6b')).toBe('e2f8f618d80dd2e1');
    expect(fnv1a64Hex('kube-system')).toBe('df65c7bc1d82b35e');
    expect(fnv1a64Hex('ünïcode')).toBe('b1b0d40350a25beb');
  });

  it('puts a value in the slot of its hash top byte', () => {
    expect(shardSlot('3f2a1c9e-8b7d-4e6f-9a0b-1c2d3e4f5a6b')).toBe(0xe2);
    expect(shardSlot('')).toBe(0xcb);
  });
});

describe('shardSelector', () => {
  it('merges adjacent slots into one range and ends the last at 2^64', () => {
    expect(slotRuns([5, 3, 4, 9, SLOTS - 1, 4])).toEqual([[3, 6], [9, 10], [SLOTS - 1, SLOTS]]);
    expect(shardSelector('object.metadata.uid', [0, 1, SLOTS - 1])).toBe(
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0200000000000000') || shardRange(object.metadata.uid, '0xff00000000000000', '0x10000000000000000')",
    );
  });

  it('selects the whole space as one range and nothing as no selector', () => {
    expect(shardSelector('object.metadata.namespace', Array.from({ length: SLOTS }, (_, i) => i))).toBe(
      "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')",
    );
    expect(shardSelector('object.metadata.uid', [])).toBeUndefined();
  });

  it('ignores slots outside the space', () => {
    expect(slotRuns([-1, SLOTS, 1.5, 7])).toEqual([[7, 8]]);
  });
});

describe('serverApplied', () => {
  const share: ShardRequest = { selector: 'x', contains: (o) => o.metadata?.uid === 'mine' };
  it('believes shardInfo, and otherwise whether anything outside the share came back', () => {
    const mine = { metadata: { uid: 'mine' } };
    const other = { metadata: { uid: 'other' } };
    expect(serverApplied('x', [mine, other], share)).toBe(true);
    // Kubernetes 1.37.2 filters custom resources and metadata-only lists without echoing shardInfo.
    expect(serverApplied(undefined, [mine], share)).toBe(true);
    expect(serverApplied(undefined, [], share)).toBe(true);
    // A server without sharded list and watch answers with the whole collection.
    expect(serverApplied(undefined, [mine, other], share)).toBe(false);
  });
});
