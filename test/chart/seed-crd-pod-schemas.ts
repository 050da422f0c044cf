// The seed CRDs' pod schemas (PodSet's spec.template.spec, Watcher's spec.container and spec.volume),
// generated from Kubernetes' own OpenAPI (api/openapi-spec/v3/api__v1_openapi.json of the version the local
// control plane runs, or its /openapi/v3/api/v1) as controller-gen would: structural, so the API server prunes
// unknown fields instead of storing them; bounded (maxItems, maxProperties) where Kubernetes leaves lists and
// maps open. `npm run crds:pod-schemas` rewrites the files (run it after moving to another Kubernetes version).
import { readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument, stringify } from 'yaml';
import { componentVersion } from '../../cli/cluster/versions.ts';

type Schema = Record<string, unknown>;
interface OpenApi {
  components: { schemas: Record<string, Schema> };
}

/** Lists and maps Kubernetes leaves unbounded get these bounds: far above any real pod, far below a bomb. */
export const DEFAULT_MAX_ITEMS = 256;
export const DEFAULT_MAX_PROPERTIES = 256;
const KEPT_FORMATS = new Set(['int32', 'int64', 'double', 'byte', 'date-time']);
const REF = '#/components/schemas/';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const stringMap = { type: 'object', maxProperties: DEFAULT_MAX_PROPERTIES, additionalProperties: { type: 'string' } };

/** The structural schema of one definition: $refs inlined, descriptions, defaults and patch hints dropped. */
export function structuralSchema(openapi: OpenApi, name: string): Schema {
  return convert(openapi, { $ref: `${REF}${name}` }, []);
}

function convert(openapi: OpenApi, source: Schema, seen: readonly string[]): Schema {
  const ref = refOf(source);
  if (ref) {
    // The API server rewrites an embedded ObjectMeta's schema (a volumeClaimTemplate's metadata), so every
    // apply would differ from what it stores; what a template's metadata needs is its labels and annotations.
    if (ref === OBJECT_META) return { type: 'object', properties: { annotations: stringMap, labels: stringMap } };
    if (seen.includes(ref)) throw new Error(`${ref} refers to itself through ${seen.join(' > ')}: not structural`);
    const target = openapi.components.schemas[ref];
    if (!target) throw new Error(`no schema ${ref}`);
    return convert(openapi, target, [...seen, ref]);
  }
  // IntOrString and Quantity: what controller-gen writes for them.
  if (source.format === 'int-or-string' || (Array.isArray(source.oneOf) && seen.at(-1)?.endsWith('.Quantity'))) {
    return { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
  }
  const out: Schema = {};
  if (typeof source.type === 'string') out.type = source.type;
  if (typeof source.format === 'string' && KEPT_FORMATS.has(source.format)) out.format = source.format;
  if (Array.isArray(source.enum)) out.enum = source.enum;
  if (Array.isArray(source.required) && source.required.length > 0) out.required = source.required;
  if (source.properties) {
    out.type = 'object';
    out.properties = Object.fromEntries(Object.entries(source.properties as Record<string, Schema>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, value]) => [key, convert(openapi, value, seen)]));
  }
  if (source.additionalProperties && typeof source.additionalProperties === 'object') {
    out.type = 'object';
    out.maxProperties = DEFAULT_MAX_PROPERTIES;
    out.additionalProperties = convert(openapi, source.additionalProperties as Schema, seen);
  }
  if (source.items) {
    out.type = 'array';
    out.maxItems = DEFAULT_MAX_ITEMS;
    out.items = convert(openapi, source.items as Schema, seen);
  }
  // An object with neither (an empty struct such as emptyDir's medium-less form) keeps nothing unknown.
  if (out.type === 'object' && !out.properties && !out.additionalProperties) out.properties = {};
  return out;
}

function refOf(source: Schema): string | undefined {
  const direct = typeof source.$ref === 'string' ? source.$ref : undefined;
  const allOf = Array.isArray(source.allOf) && source.allOf.length === 1 ? (source.allOf[0] as Schema).$ref : undefined;
  const ref = direct ?? (typeof allOf === 'string' ? allOf : undefined);
  return ref?.startsWith(REF) ? ref.slice(REF.length) : undefined;
}

/** Deep-merges the seed's own tighter rules (required fields, enums, smaller bounds) over a generated schema. */
export function overlay(base: Schema, extra: Schema): Schema {
  const out: Schema = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] = isRecord(value) && isRecord(current) ? overlay(current, value) : value;
  }
  return out;
}
const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

const text = (maxLength: number, minLength?: number): Schema => ({ ...(minLength ? { minLength } : {}), maxLength });
const strings = { maxItems: 256, items: text(4096) };
const DNS_LABEL = { maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' };

const described = (description: string, schema: Schema): Schema => ({ description, ...schema });

/** What each seed CRD adds to the generated schemas (what its function relies on). */
export function seedPodSchemas(openapi: OpenApi): { podSpec: Schema; container: Schema; volume: Schema } {
  const container = (name: Schema): Schema => ({
    required: ['name', 'image'],
    properties: { name, image: text(1024, 1), command: strings, args: strings, env: { items: { properties: { name: text(253, 1), value: text(32768) } } }, envFrom: { maxItems: 64 }, volumeMounts: { maxItems: 64 } },
  });
  return {
    podSpec: described('A core/v1 PodSpec (generated from Kubernetes\' OpenAPI by test/chart/seed-crd-pod-schemas.ts): unknown fields are pruned.', overlay(structuralSchema(openapi, 'io.k8s.api.core.v1.PodSpec'), {
      required: ['containers'],
      properties: {
        containers: { minItems: 1, maxItems: 16, items: container(text(63, 1)) },
        restartPolicy: {
          description: 'Always, as for a ReplicaSet: a pod that ends is no longer available and gets replaced, so OnFailure or Never would replace pods for ever.',
          enum: ['Always'],
        },
      },
    })),
    container: described(
      'The sidecar container (a core/v1 Container, generated from Kubernetes\' OpenAPI; unknown fields are pruned); name and image are required, as in the seed.',
      overlay(structuralSchema(openapi, 'io.k8s.api.core.v1.Container'), container(DNS_LABEL)),
    ),
    volume: described(
      'A volume (a core/v1 Volume, generated from Kubernetes\' OpenAPI; unknown fields are pruned) added to the pod along with the sidecar.',
      overlay(structuralSchema(openapi, 'io.k8s.api.core.v1.Volume'), { properties: { name: DNS_LABEL } }),
    ),
  };
}

const CRD_DIR = fileURLToPath(new URL('../../charts/kubeloop/files/crds/', import.meta.url));
/** Where each schema goes, below spec.versions[0].schema.openAPIV3Schema.properties. */
export const SEED_SCHEMA_PATHS = [
  { file: 'podsets.app.kubeloop.dev.yaml', path: ['spec', 'template', 'spec'], schema: 'podSpec' },
  { file: 'watchers.watch.kubeloop.dev.yaml', path: ['spec', 'container'], schema: 'container' },
  { file: 'watchers.watch.kubeloop.dev.yaml', path: ['spec', 'volume'], schema: 'volume' },
] as const;

/**
 * The CRD files' texts with the generated schemas in place: each schema's text span is replaced, so the
 * hand-written rest of the file (comments, flow style) stays as it is.
 */
export async function renderSeedCrds(openapi: OpenApi, read: (file: string) => Promise<string> = (file) => readFile(join(CRD_DIR, file), 'utf8')): Promise<Map<string, string>> {
  const schemas = seedPodSchemas(openapi);
  const texts = new Map<string, string>();
  for (const { file, path, schema } of SEED_SCHEMA_PATHS) {
    const text = texts.get(file) ?? (await read(file));
    const at = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', ...path.flatMap((p) => ['properties', p])];
    const node = parseDocument(text).getIn(at, true) as { range?: [number, number, number] } | undefined;
    if (!node?.range) throw new Error(`${file} has no ${at.join('.')}`);
    const [start, end] = node.range;
    const column = start - text.lastIndexOf('\n', start - 1) - 1;
    const block = stringify(schemas[schema], { lineWidth: 120, aliasDuplicateObjects: false }).trimEnd().replaceAll('\n', `\n${' '.repeat(column)}`);
    // A block node's range ends after its last line break: the next key starts there.
    texts.set(file, `${text.slice(0, start)}${block}${text[end - 1] === '\n' ? '\n' : ''}${text.slice(end)}`);
  }
  return texts;
}

/** The OpenAPI of the Kubernetes version the local control plane is built from, in the Go module cache. */
function defaultOpenApiFile(): string {
  const modCache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  return join(modCache, `k8s.io/kubernetes@${componentVersion('kubernetes')}`, 'api/openapi-spec/v3/api__v1_openapi.json');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? defaultOpenApiFile();
  const openapi = JSON.parse(await readFile(file, 'utf8')) as OpenApi;
  for (const [name, content] of await renderSeedCrds(openapi)) await writeFile(join(CRD_DIR, name), content);
  console.log(`charts/kubeloop/files/crds: pod schemas generated from ${file}`);
}
