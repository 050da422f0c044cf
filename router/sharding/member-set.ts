// A set of live router members and the key assignment over it: a key's slot (the top byte of the API
// server's shard hash of its uid) goes to a member by rendezvous (highest-random-weight) hashing, so a
// member joining or leaving moves only the slots it wins or held, and a member's slots are hash ranges the
// API server can filter a list or watch by (lib/kube/shard-selector.ts).
import { SLOTS } from '../../lib/kube/shard-selector.ts';

/** FNV-1a over UTF-16 code units, finished with murmur3's avalanche so nearby strings spread. */
export function hash32(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** murmur3's fmix32: every input bit flips about half the output bits. */
function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Which member owns each slot; the same on every member that sees the same set. */
export class MemberSet {
  readonly members: readonly string[];
  /** Short and stable: two members agree on a view exactly when their ids are equal (a Lease label value). */
  readonly id: string;
  readonly #seeds: Uint32Array;
  /** Index into members of each slot's owner, computed on first use. */
  #owners: Int16Array | undefined;

  constructor(members: Iterable<string>) {
    this.members = [...new Set(members)].sort();
    this.#seeds = Uint32Array.from(this.members, (m) => hash32(m, 0x9e3779b9));
    const joined = this.members.join('\n');
    this.id = this.members.length === 0 ? 'none' : `${hash32(joined).toString(16).padStart(8, '0')}${hash32(joined, 0x1b873593).toString(16).padStart(8, '0')}`;
  }

  static readonly EMPTY = new MemberSet([]);

  get size(): number {
    return this.members.length;
  }

  has(member: string): boolean {
    return this.members.includes(member);
  }

  /** The owner of a slot (lib/kube/shard-selector.ts shardSlot); undefined for an empty set. */
  owner(slot: number): string | undefined {
    const index = this.#table()[slot];
    return index === undefined || index < 0 ? undefined : this.members[index];
  }

  /** The slots a member owns, in order (its hash ranges). */
  slotsOf(member: string): number[] {
    const index = this.members.indexOf(member);
    const table = this.#table();
    const slots: number[] = [];
    for (let slot = 0; slot < SLOTS; slot++) if (index >= 0 && table[slot] === index) slots.push(slot);
    return slots;
  }

  /** Each slot's owner by the highest score of (slot, member). */
  #table(): Int16Array {
    if (this.#owners) return this.#owners;
    const owners = new Int16Array(SLOTS).fill(-1);
    for (let slot = 0; slot < SLOTS; slot++) {
      const slotHash = hash32(String(slot), 0x85ebca6b);
      let best = -1;
      for (let i = 0; i < this.members.length; i++) {
        const score = mix32(slotHash ^ this.#seeds[i]!);
        if (score > best) {
          best = score;
          owners[slot] = i;
        }
      }
    }
    this.#owners = owners;
    return owners;
  }
}
