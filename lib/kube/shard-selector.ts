// Server-side sharded list and watch (KEP-5866, Kubernetes 1.36+, feature gate ShardedListAndWatch): the
// API server's hash (64-bit FNV-1a of the field's bytes) and the `shardSelector` query value over ranges of it.
import type { KubernetesObject } from '@kubernetes/client-node';

/** The fields the API server can shard on (k8s.io/apiserver/pkg/sharding: only these two). */
export type ShardField = 'object.metadata.uid' | 'object.metadata.namespace';

const ENCODER = new TextEncoder();

/**
 * 64-bit FNV-1a of the UTF-8 bytes, as two 32-bit halves: k8s.io/apimachinery/pkg/sharding.HashField.
 * The prime 2^40 + 0x1b3 multiplies as h * 0x1b3 + (h << 40); every partial product stays below 2^53.
 */
export function fnv1a64(value: string): { hi: number; lo: number } {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (const byte of ENCODER.encode(value)) {
    lo = (lo ^ byte) >>> 0;
    const low = lo * 0x1b3;
    const carry = Math.floor(low / 0x1_0000_0000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return { hi, lo };
}

/** The hash as the server prints it: 16 lowercase hex digits. */
export function fnv1a64Hex(value: string): string {
  const { hi, lo } = fnv1a64(value);
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** The value the server hashes for a field of an object. */
export function shardFieldValue(object: KubernetesObject, field: ShardField): string {
  return (field === 'object.metadata.uid' ? object.metadata?.uid : object.metadata?.namespace) ?? '';
}

/** Number of slots the hash space is cut into: a slot is the hash's top SLOT_BITS bits. */
export const SLOT_BITS = 8;
export const SLOTS = 1 << SLOT_BITS;

/** The slot of a value: the top byte of its hash, so a slot is one contiguous hash range. */
export function shardSlot(value: string): number {
  return fnv1a64(value).hi >>> (32 - SLOT_BITS);
}

/** Bound of a slot as a selector literal: 0x + 16 hex digits, or 2^64 for the end of the last slot. */
function slotBound(slot: number): string {
  if (slot >= SLOTS) return '0x10000000000000000';
  return `0x${(slot << (32 - SLOT_BITS) >>> 0).toString(16).padStart(8, '0')}00000000`;
}

/** Runs of adjacent slots as [start, end) slot ranges, in order. */
export function slotRuns(slots: Iterable<number>): Array<[number, number]> {
  const sorted = [...new Set(slots)].filter((s) => Number.isInteger(s) && s >= 0 && s < SLOTS).sort((a, b) => a - b);
  const runs: Array<[number, number]> = [];
  for (const slot of sorted) {
    const last = runs[runs.length - 1];
    if (last && last[1] === slot) last[1] = slot + 1;
    else runs.push([slot, slot + 1]);
  }
  return runs;
}

/**
 * The `shardSelector` that selects exactly these slots: `shardRange(field, 'start', 'end') || ...`, adjacent
 * slots merged into one range. Undefined for no slots (the server refuses an empty selector).
 */
export function shardSelector(field: ShardField, slots: Iterable<number>): string | undefined {
  const runs = slotRuns(slots);
  if (runs.length === 0) return undefined;
  return runs.map(([start, end]) => `shardRange(${field}, '${slotBound(start)}', '${slotBound(end)}')`).join(' || ');
}

/** What a sharded cache last listed: the selector it sent, and whether the server applied it. */
export interface ListedShard {
  selector: string;
  /** The server filtered the list (and filters the watch): see serverApplied. */
  applied: boolean;
}

/** One share to ask for: the selector, and the test of an object against exactly that selector. */
export interface ShardRequest {
  selector: string;
  contains(object: KubernetesObject): boolean;
}

/**
 * Whether the server applied the selector to a list: it says so in metadata.shardInfo, or (Kubernetes 1.37.2
 * filters custom resources and metadata-only lists without echoing shardInfo) it returned nothing outside
 * the share. A server that ignores the parameter returns the whole collection: an object outside the share
 * shows it; until one exists, filtering or not makes no difference to the cache.
 */
export function serverApplied(shardInfo: string | undefined, items: readonly KubernetesObject[], request: ShardRequest): boolean {
  return shardInfo !== undefined || items.every((item) => request.contains(item));
}

/** A cache that lists and watches a share: what it holds now. */
export interface ShardedCache {
  listedShard(): ListedShard | undefined;
}

/** What an informer asks the server for: a selector, and the test of one object against it. */
export interface InformerShard {
  /** The share to list and watch now; undefined until there is one to ask for. */
  request(): ShardRequest | undefined;
  /** Calls back when the selector changes (the informer lists again); returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Registers a cache whose lists decide when the share is held; returns the unregister. */
  track(cache: ShardedCache): () => void;
  /** A tracked cache completed a list. */
  listed(): void;
}

/** The shardInfo of a list response, if the server applied a shard selector. */
export function listShardInfo(list: { metadata?: object | undefined }): string | undefined {
  const info = (list.metadata as { shardInfo?: { selector?: string } } | undefined)?.shardInfo;
  return typeof info?.selector === 'string' ? info.selector : undefined;
}
