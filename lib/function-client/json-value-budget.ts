// Counts the values and the nesting of a JSON text as its bytes stream in, so a reply or request made of
// millions of tiny values (`[{},{},...]`) is refused before JSON.parse builds a heap object for each.
// Web-platform only (Uint8Array): the fetch handler's runtime uses it where Node is absent.

/** Far above any Kubernetes object or reply (a 1,000-pod list is ~60,000 values), far below a heap bomb. */
export const DEFAULT_MAX_JSON_VALUES = 200_000;

export type BudgetVerdict = { ok: true } | { ok: false; problem: 'values' | 'depth'; message: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** A byte starting a number, true, false or null. */
const startsScalar = (byte: number): boolean => (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x74 || byte === 0x66 || byte === 0x6e;
const isWhitespace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * A streaming counter: feed it chunks, it says when the text holds more than `maxValues` values (objects,
 * arrays, strings that are not keys, numbers, booleans, nulls) or nests deeper than `maxDepth`. For valid
 * JSON the count is exact; for invalid JSON it is some count, and JSON.parse refuses the text anyway.
 * UTF-8 multi-byte sequences never contain the ASCII bytes it looks at, so chunks may split anywhere.
 */
export class JsonValueBudget {
  #values = 0;
  #inString = false;
  #escaped = false;
  #inScalar = false;
  /** One byte per open container: 1 for an object, 0 for an array. */
  readonly #stack: number[] = [];
  #expectKey = false;

  constructor(
    readonly maxValues = DEFAULT_MAX_JSON_VALUES,
    readonly maxDepth = Number.POSITIVE_INFINITY,
  ) {}

  get values(): number {
    return this.#values;
  }

  feed(chunk: Uint8Array): BudgetVerdict {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) this.#inString = false;
        continue;
      }
      if (this.#inScalar) {
        if (!(isWhitespace(byte) || byte === COMMA || byte === CLOSE_ARRAY || byte === CLOSE_OBJECT)) continue;
        this.#inScalar = false;
      }
      switch (byte) {
        case QUOTE:
          this.#inString = true;
          if (this.#expectKey && this.#stack.at(-1) === 1) this.#expectKey = false;
          else this.#values++;
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          this.#values++;
          this.#stack.push(byte === OPEN_OBJECT ? 1 : 0);
          this.#expectKey = byte === OPEN_OBJECT;
          if (this.#stack.length > this.maxDepth) return { ok: false, problem: 'depth', message: `nests deeper than ${this.maxDepth} levels` };
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          this.#stack.pop();
          this.#expectKey = false;
          break;
        case COMMA:
          this.#expectKey = this.#stack.at(-1) === 1;
          break;
        case COLON:
          this.#expectKey = false;
          break;
        default:
          if (startsScalar(byte)) {
            this.#values++;
            this.#inScalar = true;
          }
      }
      if (this.#values > this.maxValues) return { ok: false, problem: 'values', message: `holds more than ${this.maxValues} JSON values` };
    }
    return { ok: true };
  }
}

/** Checks a whole text at once (a request body the transport has already read). */
export function checkJsonBudget(text: string, maxValues = DEFAULT_MAX_JSON_VALUES, maxDepth?: number): BudgetVerdict {
  // Every value starts with a character of its own ({, [, ", a digit, -, t, f, n), so a text holds at most as
  // many values as characters, and opens at most as many containers: a short text cannot break the budget.
  // Most requests (a pod is ~4-6 KB) end here without the scan and its UTF-8 copy (10 % of a function's CPU).
  if (text.length <= maxValues && (maxDepth === undefined || text.length <= maxDepth)) return { ok: true };
  const budget = new JsonValueBudget(maxValues, maxDepth);
  const encoder = new TextEncoder();
  // In slices, so an 8 MiB body is never copied whole; a surrogate pair cut in two only changes non-ASCII bytes.
  for (let start = 0; start < text.length; start += SLICE) {
    const verdict = budget.feed(encoder.encode(text.slice(start, start + SLICE)));
    if (!verdict.ok) return verdict;
  }
  return { ok: true };
}

const SLICE = 64 * 1024;
