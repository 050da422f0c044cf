// A deep copy of a JSON value, several times faster than fast-json-patch's JSON round trip (patchOf copies
// the whole object on every reconcile, so this is on the hot path of every function).
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i] as unknown);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  // for-in, not for-of over Object.keys: Maglev, a function image's top tier, allocates an iterator result per key
  // (2.2 against 0.5 KB per pod request). Own properties only, as Object.keys: an inherited one is not the value's.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    // Like JSON.stringify: undefined members are dropped.
    if (item === undefined) continue;
    // A "__proto__" key from JSON.parse is an own property; plain assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: cloneJson(item), enumerable: true, writable: true, configurable: true });
    else out[key] = cloneJson(item);
  }
  return out as T;
}
