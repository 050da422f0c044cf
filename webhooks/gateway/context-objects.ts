// Context objects of an admission: which object an AdmissionHook's context entry names for the object
// being admitted, and what the function receives of it. Pure; the cache they are read from is context-cache.ts.
import type { ContextName, HookContextEntry } from '../../api/admission-hook.ts';
import type { KubeObject } from '../../api/meta.ts';
import { isObjectName } from '../base/hook-spec.ts';

/** Reads a dotted path such as spec.serviceAccountName; only string values name objects. */
function fieldAt(object: unknown, path: string): string | undefined {
  let value: unknown = object;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'string' ? value : undefined;
}

/**
 * The name a context entry gives for `object`, or undefined when the object names none or something that is
 * not an object name: "kube-system/x" in an annotation must not pick an object of another namespace.
 */
export function contextObjectName(source: ContextName, object: KubeObject | undefined): string | undefined {
  const metadata = object?.metadata;
  const name =
    source.value ?? (source.annotation ? metadata?.annotations?.[source.annotation] : source.label ? metadata?.labels?.[source.label] : source.fieldPath ? fieldAt(object, source.fieldPath) : undefined);
  const trimmed = typeof name === 'string' ? name.trim() : undefined;
  return trimmed && isObjectName(trimmed) ? trimmed : undefined;
}

/** "Same" (or no namespace) means the admitted object's; cluster-scoped kinds have none. */
export function contextNamespace(entry: HookContextEntry, requestNamespace: string | undefined, namespaced: boolean): string | undefined {
  if (!namespaced) return undefined;
  return !entry.namespace || entry.namespace === 'Same' ? requestNamespace : entry.namespace;
}

/** What functions receive: no managedFields, and none of the spec fields the hook asked to omit. */
export function slimContextObject(object: KubeObject, omitFields: string[] = []): KubeObject {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {};
  const out: KubeObject = { ...object, metadata };
  const spec = object.spec;
  if (omitFields.length > 0 && typeof spec === 'object' && spec !== null) {
    const kept = { ...(spec as Record<string, unknown>) };
    for (const field of omitFields) delete kept[field];
    out.spec = kept;
  }
  return out;
}
