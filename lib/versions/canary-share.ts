// Which keys (or admission requests) a canary answers for: a stable hash of the key picks one of 10,000
// buckets, and a weight of w percent takes the first w * 100 of them, so every router replica, every
// restart and every weight change agree on the share, and raising the weight only adds keys to it.
import { createHash } from 'node:crypto';

export const SHARE_BUCKETS = 10_000;

/** The key's bucket in [0, SHARE_BUCKETS): the first four bytes of its SHA-256. */
export function shareBucket(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % SHARE_BUCKETS;
}

/** Whether `key` falls in a canary share of `weight` percent (0..100; fractions down to 0.01 %). */
export function inCanaryShare(key: string, weight: number): boolean {
  return shareBucket(key) < Math.round(weight * (SHARE_BUCKETS / 100));
}
