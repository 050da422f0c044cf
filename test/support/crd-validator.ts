// Checks objects against a CRD's openAPIV3Schema without an API server, for unit tests of samples:
// ajv for the OpenAPI part (x-kubernetes-* keywords stripped), and a JavaScript twin of each CEL rule.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { formatSchemaErrors } from '../../lib/contract/validate.ts';

export type JsonSchema = { [key: string]: unknown };

export interface CrdVersionSchema {
  crd: string;
  group: string;
  kind: string;
  version: string;
  schema: JsonSchema;
  printerColumns: Array<{ name: string; jsonPath: string }>;
}

type Json = Record<string, unknown>;

// The At schedule rules' regular expression, as written in the CEL source and as JavaScript.
const UTC_RFC3339_CEL = "'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]{1,9})?Z$'";
const UTC_RFC3339 = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$/;

/**
 * CEL rules of the kubeloop CRDs, by their exact text, with a JavaScript predicate that means the same.
 * A rule missing here fails the test, so adding a CEL rule means saying here what it accepts.
 */
export const CEL_TWINS: Record<string, (self: never) => boolean> = {
  'self.metadata.name.size() <= 63': (self: Json) => String((self.metadata as Json | undefined)?.name ?? '').length <= 63,
  'self.metadata.name.size() <= 246': (self: Json) => String((self.metadata as Json | undefined)?.name ?? '').length <= 246,
  '!has(self.configData) || !has(self.configBinaryData) || self.configData.all(k, !(k in self.configBinaryData))': (self: Json) => {
    const data = self.configData as Json | undefined;
    const binary = self.configBinaryData as Json | undefined;
    return !data || !binary || Object.keys(data).every((k) => !(k in binary));
  },
  [`self.matches(${UTC_RFC3339_CEL})`]: (self: string) => UTC_RFC3339.test(self),
  [`!self.matches(${UTC_RFC3339_CEL}) || string(timestamp(self)) != ''`]: (self: string) =>
    !UTC_RFC3339.test(self) || isDateTime(self),
};

// RFC 3339 as Kubernetes' OpenAPI "date-time" accepts it, with a real calendar date.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
  return date.getUTCMonth() === mo! - 1 && date.getUTCDate() === d && h! < 24 && mi! < 60 && s! < 61;
}

function newAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addFormat('date-time', isDateTime);
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  return ajv;
}

/**
 * The schema in the JSON Schema dialect ajv speaks: x-kubernetes-* keywords dropped, and OpenAPI 3.0's
 * boolean exclusiveMinimum/exclusiveMaximum and nullable turned into their JSON Schema equivalents.
 */
export function withoutKubernetesKeywords(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutKubernetesKeywords);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-kubernetes-') || key === 'nullable') continue;
    out[key] = key === 'properties' ? mapValues(value as Json, withoutKubernetesKeywords) : withoutKubernetesKeywords(value);
  }
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (out[exclusive] === true) {
      out[exclusive] = out[bound];
      delete out[bound];
    } else if (out[exclusive] === false) delete out[exclusive];
  }
  if ((schema as Json).nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function mapValues(object: Json, fn: (value: unknown) => unknown): Json {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v)]));
}

export function loadCrds(dir: string): CrdVersionSchema[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => ({ file, crd: doc.toJS() as Json })),
    )
    .flatMap(({ file, crd }) => {
      const spec = crd.spec as { group: string; names: { kind: string }; versions: Json[] };
      return spec.versions.map((v) => ({
        crd: file,
        group: spec.group,
        kind: spec.names.kind,
        version: String(v.name),
        schema: (v.schema as { openAPIV3Schema: JsonSchema }).openAPIV3Schema,
        printerColumns: (v.additionalPrinterColumns as Array<{ name: string; jsonPath: string }> | undefined) ?? [],
      }));
    });
}

type CelRule = { rule: string; message?: string };

/** Every CEL rule in a schema, wherever it sits. */
export function celRulesOf(schema: JsonSchema): string[] {
  const own = ((schema['x-kubernetes-validations'] as CelRule[] | undefined) ?? []).map((r) => r.rule);
  const children = [
    ...Object.values((schema.properties as Record<string, JsonSchema> | undefined) ?? {}),
    ...(schema.items ? [schema.items as JsonSchema] : []),
    ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties as JsonSchema] : []),
  ];
  return [...own, ...children.flatMap(celRulesOf)];
}

function celErrors(schema: JsonSchema, value: unknown, path: string, skipUnknown: boolean): string[] {
  if (value === undefined) return [];
  const errors: string[] = [];
  for (const { rule, message } of (schema['x-kubernetes-validations'] as CelRule[] | undefined) ?? []) {
    const twin = CEL_TWINS[rule] as ((self: unknown) => boolean) | undefined;
    if (!twin && skipUnknown) continue;
    if (!twin) throw new Error(`no JavaScript twin for the CEL rule at ${path || '(root)'}: ${rule}`);
    if (!twin(value)) errors.push(`${path || '(root)'} ${message ?? rule}`);
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties && typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(properties)) errors.push(...celErrors(child, (value as Json)[key], `${path}/${key}`, skipUnknown));
  }
  if (schema.items && Array.isArray(value)) {
    value.forEach((item, i) => errors.push(...celErrors(schema.items as JsonSchema, item, `${path}/${i}`, skipUnknown)));
  }
  return errors;
}

export interface ObjectValidator {
  (object: unknown): string[];
}

const compiledSchemas = new WeakMap<CrdVersionSchema, ValidateFunction>();

/**
 * Validates objects of one CRD version: schema errors, then CEL rule violations, as readable lines.
 * `skipUnknownCel` is for CRDs whose rules have no twin in CEL_TWINS (ones this test does not own).
 */
export function validatorFor(crd: CrdVersionSchema, { skipUnknownCel = false } = {}): ObjectValidator {
  let compiled = compiledSchemas.get(crd);
  if (!compiled) {
    compiled = newAjv().compile(withoutKubernetesKeywords(crd.schema) as JsonSchema);
    compiledSchemas.set(crd, compiled);
  }
  const validate = compiled;
  return (object) => {
    if (!validate(object)) return formatSchemaErrors(validate.errors);
    return celErrors(crd.schema, object, '', skipUnknownCel);
  };
}

/** Places where the schema is not structural: a node without a type, or properties next to additionalProperties. */
export function structuralProblems(schema: JsonSchema, path = ''): string[] {
  const problems: string[] = [];
  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-int-or-string'] === true;
  if (schema.type === undefined && !preserves) problems.push(`${path || '(root)'} has no type`);
  if (schema.properties && schema.additionalProperties) problems.push(`${path} has both properties and additionalProperties`);
  for (const [key, child] of Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${key}`));
  }
  if (schema.items) problems.push(...structuralProblems(schema.items as JsonSchema, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') {
    problems.push(...structuralProblems(schema.additionalProperties as JsonSchema, `${path}{}`));
  }
  return problems;
}

/** Whether a printer column's jsonPath (".a.b[?(@.x==\"y\")].c") names fields the schema declares. */
export function schemaHasPath(schema: JsonSchema, jsonPath: string): boolean {
  if (jsonPath === '.metadata.creationTimestamp' || jsonPath.startsWith('.metadata.')) return true;
  let node: JsonSchema | undefined = schema;
  for (const segment of jsonPath.replace(/\[\?\(.*?\)\]/g, '[]').split('.').filter(Boolean)) {
    const [name, ...arrays] = segment.split('[]');
    node = (node?.properties as Record<string, JsonSchema> | undefined)?.[name!];
    for (let i = 1; i < arrays.length + 1 && node; i++) node = node.items as JsonSchema | undefined;
  }
  return node !== undefined;
}
