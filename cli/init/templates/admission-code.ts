// `kubeloop init --admission` project, the code half: the admission module (validating: a required label;
// mutating: a label added idempotently), its unit test and one recorded AdmissionRequest whose response is
// computed with the SDK here, so it is what the generated module answers.
import type { AdmissionRequest, AdmissionResponse } from '../../../lib/contract/admission-types.ts';
import type { KubeObject } from '../../../lib/contract/types.ts';
import { allow, deny, mutate } from '../../../lib/sdk/admission.ts';
import type { ProjectOptions } from '../project-options.ts';
import { admissionRequestFor } from '../../../lib/testing/admission-requests.ts';
import type { ProjectFile } from './project-file.ts';

/** The label the validating example requires. */
export const REQUIRED_LABEL = 'team';

export function admittedLabel(options: ProjectOptions): string {
  return `${options.name}.example.com/admitted`;
}

function validatingModule(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `// ${options.name}: a kubeloop validating admission function for ${kind} (${apiVersion}), a pure (request) => response.
// kubeloop init wrote this example: it denies a ${kind} without a "${REQUIRED_LABEL}" label. Replace it with your policy.
import { allow, defineAdmission, deny, type AdmissionRequest, type AdmissionResponse } from 'kubeloop';

export const REQUIRED_LABEL = '${REQUIRED_LABEL}';

export function admit(request: AdmissionRequest): AdmissionResponse {
  // DELETE carries no object (request.oldObject is the stored one): nothing to check.
  const object = request.object;
  if (!object) return allow();
  if (object.metadata?.labels?.[REQUIRED_LABEL]?.trim()) return allow();
  // generateName: a ReplicaSet's pods have no name yet at admission.
  const name = object.metadata?.name || \`\${object.metadata?.generateName ?? ''}*\`;
  // What kubectl prints after "admission webhook ... denied the request:". Decide the same on a dry run.
  return deny(\`${kind} "\${name}" needs a "\${REQUIRED_LABEL}" label (add metadata.labels.\${REQUIRED_LABEL})\`, { code: 422, reason: 'Invalid' });
}

export default defineAdmission({ name: '${options.name}', type: 'validating', admit });
`;
}

function mutatingModule(options: ProjectOptions): string {
  const { kind, apiVersion } = options.for;
  return `// ${options.name}: a kubeloop mutating admission function for ${kind} (${apiVersion}), a pure (request) => response.
// kubeloop init wrote this example: it labels every ${kind} it admits. Replace the change with yours.
import { allow, defineAdmission, mutate, type AdmissionRequest, type AdmissionResponse } from 'kubeloop';

export const ADMITTED_LABEL = '${admittedLabel(options)}';

export function admit(request: AdmissionRequest): AdmissionResponse {
  // DELETE carries no object to change.
  if (!request.object) return allow();
  // mutate() runs the change on a copy and answers the JSON patch between the two; when the label is already
  // there (a reinvocation after another webhook changed the object) the patch is empty: nothing changes.
  return mutate(request, (draft) => {
    draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, [ADMITTED_LABEL]: 'true' } };
  });
}

export default defineAdmission({ name: '${options.name}', type: 'mutating', admit });
`;
}

/** The recorded request: a CREATE of the kind, as the gateway would send it. */
export function admissionFixtureRequest(options: ProjectOptions): AdmissionRequest {
  const { apiVersion, kind } = options.for;
  const object: KubeObject = { apiVersion, kind, metadata: { name: 'example', namespace: 'default', labels: { app: 'example' } } };
  return admissionRequestFor(object, { hook: options.name, uid: '0b7e2c64-3f1d-4b8e-9a51-6f0c2d7e4a10', now: '2026-01-01T00:00:00Z' });
}

/** What the generated module answers to the fixture: the same code, run here with the SDK. */
function expectedResponse(options: ProjectOptions, request: AdmissionRequest): AdmissionResponse {
  if (options.admission === 'mutating') {
    return mutate(request, (draft) => {
      draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, [admittedLabel(options)]: 'true' } };
    });
  }
  return request.object?.metadata?.labels?.[REQUIRED_LABEL]
    ? allow()
    : deny(`${options.for.kind} "example" needs a "${REQUIRED_LABEL}" label (add metadata.labels.${REQUIRED_LABEL})`, { code: 422, reason: 'Invalid' });
}

/** The recorded request and what the generated function answers, as a fixture file (every language's project has it). */
export function admissionFixture(options: ProjectOptions): { path: string; content: string } {
  const request = admissionFixtureRequest(options);
  const response = expectedResponse(options, request);
  const mutating = options.admission === 'mutating';
  const description = mutating
    ? `A new ${options.for.kind} is admitted with a JSON patch adding the label ${admittedLabel(options)}=true.`
    : `A new ${options.for.kind} without a "${REQUIRED_LABEL}" label is denied with 422 Invalid, naming the label.`;
  const file = mutating ? 'fixtures/labels-new-object.json' : 'fixtures/denies-without-team.json';
  return { path: file, content: `${JSON.stringify({ description, request, response }, null, 2)}\n` };
}

function unitTest(options: ProjectOptions): string {
  const { kind } = options.for;
  const header = `// Unit tests of ${options.name}: the admission logic called directly, then the recorded fixtures replayed over
// real HTTP (the same check as \`kubeloop replay\`). Runs with node:test: npm test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from 'kubeloop';
import { admissionRequestFor, describeFailures, replayFixtures } from 'kubeloop/testing';
`;
  const shared = `
// admissionRequestFor: the AdmissionRequest the gateway would send for this object (a CREATE unless told).
const object: KubeObject = { apiVersion: '${options.for.apiVersion}', kind: '${kind}', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } } };
`;
  const replay = `
test('answers every recorded fixture as recorded, over HTTP', async () => {
  const results = await replayFixtures(fn, fileURLToPath(new URL('../fixtures', import.meta.url)));
  assert.ok(results.length > 0, 'no fixtures in fixtures/');
  assert.equal(describeFailures(results), '');
});
`;
  if (options.admission === 'mutating') {
    return `${header}import fn, { ADMITTED_LABEL } from '../src/index.ts';
${shared}
test('adds the label to a ${kind} with a JSON patch', () => {
  const response = fn.admit(admissionRequestFor(object));
  assert.equal(response.allowed, true);
  assert.deepEqual(response.patch, [{ op: 'add', path: \`/metadata/labels/\${ADMITTED_LABEL.replace('/', '~1')}\`, value: 'true' }]);
});

test('changes nothing when reinvoked on a ${kind} it already labelled', () => {
  const labelled = { ...object, metadata: { ...object.metadata, labels: { ...object.metadata?.labels, [ADMITTED_LABEL]: 'true' } } };
  assert.equal(fn.admit(admissionRequestFor(labelled)).patch, undefined);
});

test('allows a DELETE, which has no object to change', () => {
  assert.deepEqual(fn.admit(admissionRequestFor(object, { operation: 'DELETE' })), { apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true });
});
${replay}`;
  }
  return `${header}import fn, { REQUIRED_LABEL } from '../src/index.ts';
${shared}
test('denies a ${kind} without the label with a message naming it', () => {
  const response = fn.admit(admissionRequestFor(object));
  assert.equal(response.allowed, false);
  assert.equal(response.status?.code, 422);
  assert.match(response.status?.message ?? '', new RegExp(\`needs a "\${REQUIRED_LABEL}" label\`));
});

test('allows a ${kind} that has the label', () => {
  const labelled = { ...object, metadata: { ...object.metadata, labels: { [REQUIRED_LABEL]: 'payments' } } };
  assert.equal(fn.admit(admissionRequestFor(labelled)).allowed, true);
});

test('allows a DELETE, which has no object to check', () => {
  assert.equal(fn.admit(admissionRequestFor(object, { operation: 'DELETE' })).allowed, true);
});
${replay}`;
}

export function admissionCodeFiles(options: ProjectOptions): ProjectFile[] {
  return [
    { path: 'src/index.ts', content: options.admission === 'mutating' ? mutatingModule(options) : validatingModule(options) },
    { path: 'test/index.test.ts', content: unitTest(options) },
    admissionFixture(options),
  ];
}
