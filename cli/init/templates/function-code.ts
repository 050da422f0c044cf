// `kubeloop init` function project, the code half: the reconcile module, its unit test and one recorded
// fixture whose response is computed with the SDK here, so it is what the generated module answers.
import { childrenKey } from '../../../lib/contract/children-key.ts';
import type { KubeObject, ReconcileRequest } from '../../../lib/contract/types.ts';
import { event, patchAction, respond } from '../../../lib/sdk/actions.ts';
import { stringify } from 'yaml';
import type { ProjectOptions } from '../project-options.ts';
import { SAMPLE_SPEC } from './crd-files.ts';
import type { ProjectFile } from './project-file.ts';

export function reconciledLabel(options: ProjectOptions): string {
  return `${options.name}.example.com/reconciled`;
}

function childrenComment(options: ProjectOptions): string {
  if (options.owns.length === 0) return '  // Kinds the Loop owns would arrive in request.children, one key per kind (kubeloop init --owns v1/ConfigMap).';
  const lines = options.owns.map((ref) => `  const ${lowerFirst(ref.kind)}s = request.children['${childrenKey(ref.apiVersion, ref.kind)}'] ?? [];`);
  return ['  // The owned kinds arrive in request.children, one key per kind, [] when there are none.', ...lines].join('\n');
}

function relatedComment(options: ProjectOptions): string {
  if (options.related.length === 0) return '  // Objects the primary refers to would arrive in request.related (kubeloop init --related v1/ConfigMap).';
  const lines = options.related.map((r) => `  const ${r.name}s = relatedOf(request, '${r.name}'); // the ${r.ref.kind} named by annotation ${r.annotation}; a change of it calls this again`);
  return ['  // Related objects (the Loop\'s spec.related) arrive in request.related, one key per entry.', ...lines].join('\n');
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function reconcileModule(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  const typeImport = options.crd ? `import type { ${kind} } from './${kind.toLowerCase()}.ts';\n` : '';
  return `// ${options.name}: a kubeloop reconcile function for ${kind} (${apiVersion}), a pure (request) => response.
// kubeloop init wrote this example: it labels every ${kind} it sees. Replace the body with your controller.
import { defineFunction, event, patchAction, ${options.related.length > 0 ? 'relatedOf, ' : ''}respond, type ReconcileRequest, type ReconcileResponse } from 'kubeloop';
${typeImport}
export const RECONCILED_LABEL = '${reconciledLabel(options)}';

export function reconcile(request: ReconcileRequest): ReconcileResponse {
  const object = request.object${options.crd ? ` as ${kind}` : ''};
  // An object on its way out needs nothing; patching it would only race its deletion.
  if (object.metadata?.deletionTimestamp || request.trigger.type === 'DELETED') return respond([]);
${childrenComment(options)}
${relatedComment(options)}

  // Level-based: compare what is observed with what should be; "nothing to do" is an empty answer.
  if (object.metadata?.labels?.[RECONCILED_LABEL] === 'true') return respond([]);
  return respond([
    // A JSON patch that starts with a resourceVersion test: computed from stale state, it fails and is retried.
    patchAction(object, (draft) => {
      draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, [RECONCILED_LABEL]: 'true' } };
    }),
    event('Normal', 'Reconciled', \`\${object.kind ?? '${kind}'} \${object.metadata?.name ?? ''} reconciled by ${options.name}\`),
  ]);
}

export default defineFunction({ name: '${options.name}', reconcile });
`;
}

/** The object of the recorded fixture, shaped as the API server returns it. */
export function fixtureObject(options: ProjectOptions): KubeObject {
  return {
    apiVersion: options.for.apiVersion,
    kind: options.for.kind,
    metadata: { name: 'example', namespace: 'default', uid: '6f1c1b0e-0d7a-4c53-9a55-2f1f3c0a9b11', resourceVersion: '1001', generation: 1, labels: { app: 'example' } },
    ...(options.crd ? { spec: SAMPLE_SPEC } : {}),
  };
}

export function fixtureRequest(options: ProjectOptions): ReconcileRequest {
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'ReconcileRequest',
    loop: options.name,
    reconcileId: '00000000-0000-4000-8000-000000000001',
    trigger: { type: 'ADDED' },
    object: fixtureObject(options),
    children: Object.fromEntries(options.owns.map((ref) => [childrenKey(ref.apiVersion, ref.kind), []])),
    ...(options.related.length > 0 ? { related: Object.fromEntries(options.related.map((r) => [r.name, []])) } : {}),
    now: '2026-01-01T00:00:00Z',
  };
}

export function fixture(options: ProjectOptions): string {
  const request = fixtureRequest(options);
  const label = reconciledLabel(options);
  const response = respond([
    patchAction(request.object, (draft) => {
      draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, [label]: 'true' } };
    }),
    event('Normal', 'Reconciled', `${options.for.kind} example reconciled by ${options.name}`),
  ]);
  const description = `A new ${options.for.kind} (ADDED) gets the label ${label}=true by a patch guarded by its resourceVersion, and a Reconciled event.`;
  return `${JSON.stringify({ description, request, response }, null, 2)}\n`;
}

function unitTest(options: ProjectOptions): string {
  const { kind } = options.for;
  return `// Unit tests of ${options.name}: the reconcile logic called directly, then the recorded fixtures replayed over
// real HTTP (the same check as \`kubeloop replay\`). Runs with node:test: npm test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeFailures, kubeObject, replayFixtures, requestFor } from 'kubeloop/testing';
import fn, { RECONCILED_LABEL } from '../src/index.ts';

const object = {
  apiVersion: '${options.for.apiVersion}',
  kind: '${kind}',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-1', resourceVersion: '7' },
};

test('labels a ${kind} it has not reconciled, guarded by its resourceVersion', () => {
  const [patch, event] = fn.reconcile(requestFor(object)).actions;
  assert.deepEqual(patch, {
    op: 'patch',
    target: { apiVersion: object.apiVersion, kind: object.kind, namespace: 'shop', name: 'web' },
    patch: [
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/labels', value: { [RECONCILED_LABEL]: 'true' } },
    ],
  });
  assert.equal(event?.op === 'event' && event.reason, 'Reconciled');
});

test('answers "nothing to do" when the ${kind} is already labelled', () => {
  const labelled = { ...object, metadata: { ...object.metadata, labels: { [RECONCILED_LABEL]: 'true' } } };
  assert.deepEqual(fn.reconcile(requestFor(labelled)).actions, []);
});

test('leaves a ${kind} that is being deleted alone', () => {
  // kubeObject: an object written as JSON (times as strings), typed as the client-node model.
  const deleting = kubeObject({ ...object, metadata: { ...object.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  assert.deepEqual(fn.reconcile(requestFor(deleting)).actions, []);
});

test('answers every recorded fixture as recorded, over HTTP', async () => {
  const results = await replayFixtures(fn, fileURLToPath(new URL('../fixtures', import.meta.url)));
  assert.ok(results.length > 0, 'no fixtures in fixtures/');
  assert.equal(describeFailures(results), '');
});
`;
}

/** The file name of the sample object `kubeloop init` writes: deployment.yaml for apps/v1/Deployment. */
export function sampleObjectPath(options: ProjectOptions): string {
  return `${options.for.kind.toLowerCase()}.yaml`;
}

/** A sample primary object, for `kubeloop render <file> --function ./src/index.ts --loop loop.yaml`. */
function sampleObject(options: ProjectOptions): string {
  return `# A sample ${options.for.kind} for trying the function without a cluster:
#   npx kubeloop render ${sampleObjectPath(options)} --function ./src/index.ts --loop loop.yaml
${stringify(fixtureObject(options))}`;
}

export function functionCodeFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: sampleObjectPath(options), content: sampleObject(options) },
    { path: 'src/index.ts', content: reconcileModule(options) },
    { path: 'test/index.test.ts', content: unitTest(options) },
    { path: 'fixtures/labels-new-object.json', content: fixture(options) },
  ];
}
