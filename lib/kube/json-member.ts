// The text of one member of a JSON document (`object.metadata` of a watch event), found by scanning rather
// than parsing, so an event refused for its size can still be named without building its object graph.

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string literal starting at `i` (a quote). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return text.length;
}

/** Index just past the value starting at `i`, nested containers and strings skipped without recursion. */
function valueEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 0x22) return stringEnd(text, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x22) j = stringEnd(text, j) - 1;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x2c || c === 0x7d || c === 0x5d || isWhitespace(c)) break;
    j++;
  }
  return j;
}

/**
 * The JSON text of the member at `path` (object keys from the top), or undefined when the text has no such
 * member or is not JSON there. The first of duplicate keys is taken.
 */
export function memberText(text: string, path: readonly string[]): string | undefined {
  let i = skipWhitespace(text, 0);
  for (const wanted of path) {
    if (text.charCodeAt(i) !== 0x7b) return undefined;
    i = skipWhitespace(text, i + 1);
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) return undefined;
      const keyEnd = stringEnd(text, i);
      let key: unknown;
      try {
        key = JSON.parse(text.slice(i, keyEnd));
      } catch {
        return undefined;
      }
      i = skipWhitespace(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a) return undefined;
      i = skipWhitespace(text, i + 1);
      if (key === wanted) break;
      i = skipWhitespace(text, valueEnd(text, i));
      if (text.charCodeAt(i) !== 0x2c) return undefined;
      i = skipWhitespace(text, i + 1);
    }
  }
  return i < text.length ? text.slice(i, valueEnd(text, i)) : undefined;
}
