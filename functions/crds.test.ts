// The chart's CRDs (charts/kubeloop/charts/crds/crds/ and charts/kubeloop/files/crds/) accept every sample in samples/ and refuse known-bad objects,
// checked without an API server (test/e2e/ applies the same files to a real one).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  CEL_TWINS,
  celRulesOf,
  loadCrds,
  schemaHasPath,
  structuralProblems,
  validatorFor,
  type CrdVersionSchema,
} from '../test/support/crd-validator.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const crds = ['charts/kubeloop/charts/crds/crds', 'charts/kubeloop/files/crds'].flatMap((dir) => loadCrds(join(ROOT, dir)));
/** The CRDs of the seed functions; their CEL rules must all have a JavaScript twin. */
const SEED_GROUPS = ['app.kubeloop.dev', 'watch.kubeloop.dev', 'cnat.kubeloop.dev'];

type Json = Record<string, unknown>;

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFilesUnder(path);
    return name.endsWith('.yaml') ? [path] : [];
  });
}

const samples = yamlFilesUnder(join(ROOT, 'samples')).flatMap((file) =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS() as Json | null)
    .filter((object): object is Json => object !== null)
    .map((object) => ({ file: file.slice(ROOT.length), object })),
);

function crdOf(apiVersion: string, kind: string): CrdVersionSchema | undefined {
  return crds.find((c) => `${c.group}/${c.version}` === apiVersion && c.kind === kind);
}

function errorsOf(apiVersion: string, kind: string, object: Json): string[] {
  const crd = crdOf(apiVersion, kind);
  if (!crd) throw new Error(`no CRD for ${kind} ${apiVersion}`);
  return validatorFor(crd, { skipUnknownCel: !SEED_GROUPS.includes(crd.group) })(object);
}

describe('kubeloop CRDs', () => {
  it.each(crds.map((c) => [`${c.kind} ${c.group}/${c.version}`, c] as const))('%s has a structural schema', (_name, crd) => {
    expect(structuralProblems(crd.schema)).toEqual([]);
  });

  it.each(crds.flatMap((c) => c.printerColumns.map((col) => [`${c.kind} ${col.name}`, c, col.jsonPath] as const)))(
    'printer column %s reads a declared field',
    (_name, crd, jsonPath) => {
      expect(schemaHasPath(crd.schema, jsonPath), jsonPath).toBe(true);
    },
  );

  it.each(crds.filter((c) => SEED_GROUPS.includes(c.group)).map((c) => [c.kind, c] as const))(
    '%s CEL rules all have a JavaScript twin for these tests',
    (_kind, crd) => {
      expect(celRulesOf(crd.schema).filter((rule) => !(rule in CEL_TWINS))).toEqual([]);
    },
  );

  it('has a CRD for each seed kind', () => {
    expect(crds.map((c) => `${c.kind}.${c.group}/${c.version}`)).toEqual(
      expect.arrayContaining(['PodSet.app.kubeloop.dev/v1alpha1', 'Watcher.watch.kubeloop.dev/v1alpha1', 'At.cnat.kubeloop.dev/v1alpha1']),
    );
  });
});

describe('samples', () => {
  const custom = samples.filter((s) => crdOf(String(s.object.apiVersion), String(s.object.kind)));

  it('has at least one sample per CRD of the chart', () => {
    expect(new Set(custom.map((s) => s.object.kind))).toEqual(new Set(crds.map((c) => c.kind)));
  });

  it.each(custom.map((s) => [`${s.file} ${String(s.object.kind)} ${String((s.object.metadata as Json).name)}`, s.object] as const))(
    '%s is valid',
    (_name, object) => {
      expect(errorsOf(String(object.apiVersion), String(object.kind), object)).toEqual([]);
    },
  );

  it('has no namespace in any sample, so `kubectl apply -n <ns>` works (but a Loop\'s ServiceAccount, which the Loop names)', () => {
    const loopAccounts = new Set(samples.flatMap((s) => (s.object.kind === 'ClusterLoop' ? [JSON.stringify((s.object.spec as Json).serviceAccount)] : [])));
    const namespaced = samples.filter((s) => (s.object.metadata as Json | undefined)?.namespace !== undefined);
    const isLoopAccount = (s: (typeof samples)[number]) =>
      s.object.kind === 'ServiceAccount' && loopAccounts.has(JSON.stringify({ namespace: (s.object.metadata as Json).namespace, name: (s.object.metadata as Json).name }));
    expect(namespaced.filter((s) => !isLoopAccount(s)).map((s) => s.file)).toEqual([]);
  });

  it('includes a Deployment whose pods ask for the pod-name label', () => {
    const deployment = samples.find((s) => s.object.kind === 'Deployment')?.object as
      | { spec: { template: { metadata: { annotations: Json } } } }
      | undefined;
    expect(deployment?.spec.template.metadata.annotations['kubeloop.dev/add-pod-name-label']).toBe('true');
  });
});

describe('statuses the functions write', () => {
  const FIXTURES = join(ROOT, 'test/fixtures');
  // The functions whose primary is one of these CRDs (test/fixtures/ also holds admission reviews).
  const written = ['podset', 'watcher', 'at'].flatMap((fn) =>
    readdirSync(join(FIXTURES, fn))
      .filter((file) => file.endsWith('.json'))
      .flatMap((file) => {
        const { request, response } = JSON.parse(readFileSync(join(FIXTURES, fn, file), 'utf8')) as {
          request: { object: { apiVersion: string; kind: string } };
          response: { actions: Array<{ op: string; status?: Json }> };
        };
        return response.actions
          .filter((a) => a.op === 'status')
          .map((a) => [`${fn}/${file}`, request.object, { ...a.status, observedGeneration: 1 }] as const);
      }),
  );

  it('include some', () => {
    expect(written.length).toBeGreaterThan(10);
  });

  it.each(written)('%s fits the CRD status schema', (_name, object, status) => {
    const crd = crdOf(object.apiVersion, object.kind);
    const statusSchema = (crd?.schema.properties as Record<string, Json> | undefined)?.status;
    expect(statusSchema).toBeDefined();
    const statusOnly = { ...crd!, schema: { type: 'object', properties: { status: statusSchema } } };
    expect(validatorFor(statusOnly)({ status })).toEqual([]);
  });
});

const PODSET = 'app.kubeloop.dev/v1alpha1';
const podset = (spec: Json, name = 'ps') => ({ apiVersion: PODSET, kind: 'PodSet', metadata: { name }, spec });

describe('PodSet schema refuses', () => {
  it.each([
    ['replicas 11', podset({ replicas: 11 }), /\/spec\/replicas must be <= 10/],
    ['replicas 0', podset({ replicas: 0 }), /\/spec\/replicas must be >= 1/],
    ['replicas 2.5', podset({ replicas: 2.5 }), /\/spec\/replicas must be integer/],
    ['a template without containers', podset({ template: { spec: {} } }), /\/spec\/template\/spec must have required property 'containers'/],
    ['a template with an empty container list', podset({ template: { spec: { containers: [] } } }), /must NOT have fewer than 1 items/],
    ['a container without image', podset({ template: { spec: { containers: [{ name: 'c' }] } } }), /must have required property 'image'/],
    ['a name longer than a label value', podset({ replicas: 1 }, 'p'.repeat(64)), /at most 63 characters/],
    [
      'restartPolicy Never (finished pods would be replaced for ever)',
      podset({ template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } }),
      /restartPolicy must be equal to one of the allowed values: \["Always"\]/,
    ],
  ])('%s', (_name, object, error) => {
    expect(errorsOf(PODSET, 'PodSet', object).join('\n')).toMatch(error);
  });

  it('accepts a PodSet without spec (replicas defaults to 1)', () => {
    expect(errorsOf(PODSET, 'PodSet', { apiVersion: PODSET, kind: 'PodSet', metadata: { name: 'ps' } })).toEqual([]);
  });
});

const WATCHER = 'watch.kubeloop.dev/v1alpha1';
const watcher = (spec: Json, name = 'w') => ({ apiVersion: WATCHER, kind: 'Watcher', metadata: { name }, spec });
const container = { name: 'sidecar', image: 'busybox:1.36' };

describe('Watcher schema refuses', () => {
  it.each([
    ['a spec without container', watcher({ configData: { a: 'b' } }), /\/spec must have required property 'container'/],
    ['a container without a name', watcher({ container: { image: 'busybox' } }), /\/spec\/container must have required property 'name'/],
    ['non-string configData values', watcher({ container, configData: { replicas: 3 } }), /\/spec\/configData\/replicas must be string/],
    ['configBinaryData that is not base64', watcher({ container, configBinaryData: { k: 'not base64!' } }), /must match format "byte"/],
    ['a list of imagePullSecrets (the seed has one reference)', watcher({ container, imagePullSecrets: [{ name: 's' }] }), /imagePullSecrets must be object/],
    ['a key in both data maps', watcher({ container, configData: { k: 'v' }, configBinaryData: { k: 'dg==' } }), /not both/],
    ['a name too long for <name>-config', watcher({ container }, 'w'.repeat(247)), /at most 246 characters/],
  ])('%s', (_name, object, error) => {
    expect(errorsOf(WATCHER, 'Watcher', object).join('\n')).toMatch(error);
  });
});

const AT = 'cnat.kubeloop.dev/v1alpha1';
const at = (spec: Json, name = 'a') => ({ apiVersion: AT, kind: 'At', metadata: { name }, spec });

describe('At schema refuses', () => {
  it.each([
    ['a schedule that is not a time', at({ schedule: 'tomorrow', command: 'date' }), /RFC 3339 time in UTC/],
    ['a schedule with an offset instead of Z', at({ schedule: '2020-11-16T11:12:00+01:00', command: 'date' }), /RFC 3339 time in UTC/],
    ['a schedule without a zone', at({ schedule: '2020-11-16T10:12:00', command: 'date' }), /RFC 3339 time in UTC/],
    ['February 30th', at({ schedule: '2020-02-30T10:12:00Z', command: 'date' }), /a real date and time/],
    ['hour 25', at({ schedule: '2020-11-16T25:12:00Z', command: 'date' }), /a real date and time/],
    ['a missing command', at({ schedule: '2020-11-16T10:12:00Z' }), /must have required property 'command'/],
    ['an empty command', at({ schedule: '2020-11-16T10:12:00Z', command: '' }), /\/spec\/command must NOT have fewer than 1 characters/],
    ['a status phase outside the seed', { ...at({ schedule: '2020-11-16T10:12:00Z', command: 'date' }), status: { phase: 'Done' } }, /\/status\/phase must be equal to one of the allowed values/],
    ['a name longer than a label value', at({ schedule: '2020-11-16T10:12:00Z', command: 'date' }, 'a'.repeat(64)), /at most 63 characters/],
  ])('%s', (_name, object, error) => {
    expect(errorsOf(AT, 'At', object).join('\n')).toMatch(error);
  });

  it('accepts the tutorial sample and fractional seconds', () => {
    expect(errorsOf(AT, 'At', at({ schedule: '2020-11-16T10:12:00Z', command: 'echo hello world!' }))).toEqual([]);
    expect(errorsOf(AT, 'At', at({ schedule: '2020-11-16T10:12:00.5Z', command: 'date' }))).toEqual([]);
  });
});
