// A Loop's related entries (spec.related) validated, and what one entry means for one primary: which
// object names, or which label selector in which namespace, the primary refers to. Pure.
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { RelatedResource } from '../../api/loop.ts';
import type { KindRef } from '../../api/meta.ts';
import { FieldPathError, parseFieldPath, projectFields, readField, readStrings, type FieldSegment } from '../../lib/kube/field-path.ts';
import { validateLabelSelector } from '../../lib/kube/label-selector.ts';

export type RelationSource =
  | { by: 'names'; path: FieldSegment[] }
  | { by: 'selector'; selector: V1LabelSelector }
  | { by: 'selectorFrom'; path: FieldSegment[] }
  /** Every object of the namespace scope (all Nodes, every ConfigMap of the primary's namespace). */
  | { by: 'all' };

/** Where a namespaced related kind is looked up. */
export type RelationNamespace = { from: 'primary' } | { from: 'all' } | { from: 'named'; name: string };

export interface RelationConfig {
  name: string;
  kind: KindRef;
  source: RelationSource;
  namespace: RelationNamespace;
  metadataOnly: boolean;
  /** Projection: the field paths kept besides apiVersion, kind and metadata; undefined keeps everything. */
  fields: string[] | undefined;
}

/** What one primary refers to under one relation: object keys, or a selector over a namespace (undefined: all). */
export type RelatedTarget = { kind: 'names'; keys: string[] } | { kind: 'selector'; namespace: string | undefined; selector: V1LabelSelector };

const ENTRY_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A Loop names a handful of kinds; each is one more shared watch. */
export const MAX_RELATED_ENTRIES = 16;

/** Validates spec.related; throws `{ field, problem }` naming the bad field (loop-spec.ts wraps it). */
export function parseRelated(value: unknown): RelationConfig[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw relatedError('spec.related', 'must be a list');
  if (value.length > MAX_RELATED_ENTRIES) throw relatedError('spec.related', `has ${value.length} entries; at most ${MAX_RELATED_ENTRIES}`);
  const seen = new Set<string>();
  return value.map((raw: unknown, i) => {
    const at = `spec.related[${i}]`;
    const entry = (raw ?? {}) as Partial<RelatedResource>;
    if (typeof entry.name !== 'string' || !ENTRY_NAME.test(entry.name) || entry.name.length > 63) throw relatedError(`${at}.name`, 'must be a DNS label (the key in request.related)');
    if (seen.has(entry.name)) throw relatedError(`${at}.name`, `"${entry.name}" is used twice`);
    seen.add(entry.name);
    if (typeof entry.apiVersion !== 'string' || entry.apiVersion === '') throw relatedError(`${at}.apiVersion`, 'is required');
    if (typeof entry.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(entry.kind)) throw relatedError(`${at}.kind`, `"${String(entry.kind)}" is not a Kind (CamelCase)`);
    const fields = entry.fields === undefined ? undefined : entry.fields.map((f, j) => (checkPath(`${at}.fields[${j}]`, f, false), f));
    if (fields && entry.metadataOnly) throw relatedError(`${at}.fields`, 'cannot be combined with metadataOnly');
    const namespace = relationNamespace(at, entry.namespace);
    const source = relationSource(at, entry);
    if (source.by === 'names' && namespace.from === 'all') throw relatedError(`${at}.namespace`, '"*" cannot be combined with nameFrom: a name needs one namespace');
    return {
      name: entry.name,
      kind: { apiVersion: entry.apiVersion, kind: entry.kind },
      source,
      namespace,
      metadataOnly: entry.metadataOnly === true,
      fields,
    };
  });
}

export class RelatedSpecError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}
const relatedError = (field: string, problem: string) => new RelatedSpecError(field, problem);

function checkPath(field: string, path: unknown, indexes: boolean): FieldSegment[] {
  if (typeof path !== 'string') throw relatedError(field, 'must be a field path string');
  try {
    const segments = parseFieldPath(path);
    if (!indexes && segments.some((s) => 'index' in s)) throw relatedError(field, `"${path}": a projection keeps keys and [*], not [<index>]`);
    return segments;
  } catch (error) {
    if (error instanceof FieldPathError) throw relatedError(field, error.message);
    throw error;
  }
}

function relationSource(at: string, entry: Partial<RelatedResource>): RelationSource {
  const given = (['nameFrom', 'selector', 'selectorFrom'] as const).filter((k) => entry[k] !== undefined);
  if (given.length > 1) throw relatedError(at, `has ${given.join(' and ')}: at most one of nameFrom, selector, selectorFrom`);
  if (entry.nameFrom !== undefined) {
    const from = entry.nameFrom as Record<string, unknown>;
    const sources = ['annotation', 'label', 'fieldPath'].filter((k) => from[k] !== undefined);
    if (sources.length !== 1) throw relatedError(`${at}.nameFrom`, 'needs exactly one of annotation, label, fieldPath');
    if (typeof from.annotation === 'string') return { by: 'names', path: [{ key: 'metadata' }, { key: 'annotations' }, { key: from.annotation }] };
    if (typeof from.label === 'string') return { by: 'names', path: [{ key: 'metadata' }, { key: 'labels' }, { key: from.label }] };
    return { by: 'names', path: checkPath(`${at}.nameFrom.${sources[0]}`, from[sources[0] ?? ''], true) };
  }
  if (entry.selector !== undefined) {
    try {
      validateLabelSelector(entry.selector, `${at}.selector`);
    } catch (error) {
      throw relatedError(`${at}.selector`, (error as Error).message);
    }
    return { by: 'selector', selector: entry.selector };
  }
  if (entry.selectorFrom !== undefined) return { by: 'selectorFrom', path: checkPath(`${at}.selectorFrom.fieldPath`, entry.selectorFrom.fieldPath, true) };
  return { by: 'all' };
}

function relationNamespace(at: string, value: unknown): RelationNamespace {
  if (value === undefined || value === '') return { from: 'primary' };
  if (value === '*') return { from: 'all' };
  if (typeof value !== 'string' || !NAMESPACE.test(value) || value.length > 63) throw relatedError(`${at}.namespace`, `${JSON.stringify(value)} is not "*" or a namespace name`);
  return { from: 'named', name: value };
}

/**
 * The namespaces a relation's objects are watched (or, by `kubeloop diff`, listed) in; undefined is all, and
 * cluster-scoped kinds ignore it.
 */
export function relationWatchScope(relation: RelationConfig, loopNamespaces: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
  const ns = relation.namespace;
  if (ns.from === 'named') return new Set([ns.name]);
  return ns.from === 'primary' ? loopNamespaces : undefined;
}

/** The namespace a relation looks in for this primary; undefined means all (or a cluster-scoped kind). */
export function relationNamespaceOf(relation: RelationConfig, primary: KubeObject, namespaced: boolean): string | undefined {
  if (!namespaced) return undefined;
  const ns = relation.namespace;
  if (ns.from === 'named') return ns.name;
  if (ns.from === 'all') return undefined;
  return primary.metadata?.namespace || undefined;
}

/** A selector read from the primary: a LabelSelector, or a plain label map (a Service's spec.selector). */
function selectorAt(primary: KubeObject, path: FieldSegment[]): V1LabelSelector | undefined {
  const value = readField(primary, path)[0];
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const selector: V1LabelSelector =
    'matchLabels' in record || 'matchExpressions' in record ? (record as V1LabelSelector) : { matchLabels: Object.fromEntries(Object.entries(record).filter(([, v]) => typeof v === 'string')) as Record<string, string> };
  try {
    validateLabelSelector(selector);
  } catch {
    return undefined;
  }
  // An empty selector read from an object selects nothing (as a Service without a selector), never everything.
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions?.length ?? 0) === 0 ? undefined : selector;
}

/** What `primary` refers to under `relation`; undefined when it refers to nothing (a missing field). */
export function relatedTarget(relation: RelationConfig, primary: KubeObject, namespaced: boolean): RelatedTarget | undefined {
  const namespace = relationNamespaceOf(relation, primary, namespaced);
  const source = relation.source;
  switch (source.by) {
    case 'names': {
      const names = [...new Set(readStrings(primary, source.path).map((n) => n.trim()).filter((n) => n !== ''))].sort();
      // A bare name is ambiguous across namespaces (a cluster-scoped primary naming a ConfigMap without
      // spec.related[].namespace): it refers to nothing, and parseRelated refuses namespace "*" with names.
      if (names.length === 0 || (namespaced && namespace === undefined)) return undefined;
      return { kind: 'names', keys: names.map((n) => (namespace ? `${namespace}/${n}` : n)) };
    }
    case 'selector':
      return { kind: 'selector', namespace, selector: source.selector };
    case 'selectorFrom': {
      const selector = selectorAt(primary, source.path);
      return selector ? { kind: 'selector', namespace, selector } : undefined;
    }
    case 'all':
      return { kind: 'selector', namespace, selector: {} };
  }
}

/** apiVersion, kind, metadata and the listed fields of an object (a related entry's `fields`). */
export function projectObject(object: KubeObject, fields: readonly string[]): KubeObject {
  return { ...projectFields(object, fields.map((f) => parseFieldPath(f))), apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata ?? {} } as KubeObject;
}

/** What the function receives of a related object: managedFields dropped, projected when the entry lists fields. */
export function relatedView(relation: RelationConfig, object: KubeObject): KubeObject {
  const { managedFields: _managed, ...metadata } = object.metadata ?? {};
  const base: KubeObject = { ...object, metadata };
  return relation.fields ? projectObject(base, relation.fields) : base;
}
