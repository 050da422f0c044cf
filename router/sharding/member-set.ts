// A set of live router members and the key assignment over it: rendezvous (highest-random-weight)
// hashing, so a member joining or leaving moves only the keys it wins or held (bounded movement).

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

/** Which member owns a key of a Loop; the same on every member that sees the same set. */
export class MemberSet {
  readonly members: readonly string[];
  /** Short and stable: two members agree on a view exactly when their ids are equal (a Lease label value). */
  readonly id: string;
  readonly #seeds: Uint32Array;

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

  /** The member with the highest score for the key; undefined for an empty set. */
  owner(loop: string, key: string): string | undefined {
    const keyHash = hash32(key, hash32(loop));
    let best = -1;
    let owner: string | undefined;
    for (let i = 0; i < this.members.length; i++) {
      const score = mix32(keyHash ^ this.#seeds[i]!);
      if (score > best) {
        best = score;
        owner = this.members[i];
      }
    }
    return owner;
  }
}
