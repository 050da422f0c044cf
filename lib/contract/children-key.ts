// The "children" map key of a kind: "<Kind>.<version>" for the core group, "<Kind>.<group>/<version>" otherwise.
export function childrenKey(apiVersion: string, kind: string): string {
  return `${kind}.${apiVersion}`;
}

export function parseChildrenKey(key: string): { apiVersion: string; kind: string } {
  const dot = key.indexOf('.');
  if (dot <= 0 || dot === key.length - 1) throw new Error(`invalid children key "${key}": want "<Kind>.<apiVersion>"`);
  return { kind: key.slice(0, dot), apiVersion: key.slice(dot + 1) };
}
