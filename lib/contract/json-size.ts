// The size of a value's JSON text (UTF-8 bytes) without serialising it, and a memo of it per cached object,
// so the router can tell what a request would weigh before it builds the body (docs/security.md, tenant bounds).

/** Bytes JSON.stringify(value) would produce in UTF-8; exact for what JSON can hold, walked without recursion. */
export function jsonByteSize(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') bytes += stringBytes(node);
    else if (typeof node === 'number') bytes += Number.isFinite(node) ? String(node).length : 4;
    else if (typeof node === 'boolean') bytes += node ? 4 : 5;
    else if (node === null) bytes += 4;
    else if (Array.isArray(node)) {
      // Brackets and commas; an undefined or function item is written as null.
      bytes += 2 + Math.max(0, node.length - 1);
      for (const item of node) stack.push(item === undefined || typeof item === 'function' ? null : item);
    } else if (typeof node === 'object') {
      const entries = Object.entries(node as Record<string, unknown>).filter(([, v]) => v !== undefined && typeof v !== 'function');
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, child] of entries) {
        bytes += stringBytes(key) + 1;
        stack.push(child);
      }
    }
  }
  return bytes;
}

/** A JSON string literal's bytes: quotes, escapes, and UTF-8 for the rest. */
function stringBytes(text: string): number {
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x0c || code === 0x0a || code === 0x0d || code === 0x09) bytes += 2;
    else if (code < 0x20) bytes += 6;
    else if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else if (code >= 0xd800 && code <= 0xdfff) bytes += 6; // a lone surrogate is escaped as \udXXX
    else bytes += 3;
  }
  return bytes;
}

const sizes = new WeakMap<object, number>();

/**
 * jsonByteSize of an object that is never changed after it is cached (an informer's object: an update
 * replaces it), measured once and remembered for as long as the object lives. Measured by V8's own
 * serialiser, which is what the size means: an informer's object came from JSON.parse (no cycles, no
 * functions) and is at most the API server's object limit, so the text is short-lived; on pods as
 * JSON.parse makes them, writing it costs a third of the walk (bench/json-size.bench.ts).
 */
export function cachedJsonSize(object: object): number {
  let size = sizes.get(object);
  if (size === undefined) {
    size = Buffer.byteLength(JSON.stringify(object) ?? '', 'utf8');
    sizes.set(object, size);
  }
  return size;
}
