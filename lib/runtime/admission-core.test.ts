import { describe, expect, it } from 'vitest';
import { createLogger } from '../observability/logger.ts';
import { defineAdmission, deny, allow, mutate, type AdmissionRequest } from '../sdk/index.ts';
import { createFunctionCore } from './function-core.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

const podCreate: AdmissionRequest = {
  apiVersion: 'kubeloop.dev/v1',
  kind: 'AdmissionRequest',
  hook: 'require-team',
  uid: '0f9e3c52-6e7a-4d1e-9d0c-6c6a7f0f1a01',
  operation: 'CREATE',
  requestKind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'shop',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } } },
  userInfo: { username: 'alice' },
  dryRun: false,
  context: {},
  now: '2026-11-23T10:00:00Z',
};

const requireTeam = defineAdmission({
  name: 'require-team',
  type: 'validating',
  admit: (request) => (request.object?.metadata?.labels?.team ? allow() : deny('pods need a "team" label')),
});
const addTeam = defineAdmission({
  name: 'add-team',
  type: 'mutating',
  admit: (request) => mutate(request, (pod) => {
    pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, team: 'platform' } };
  }),
});
const sneaky = defineAdmission({ name: 'sneaky', type: 'validating', admit: () => ({ ...allow(), patch: [{ op: 'remove', path: '/spec' }] }) });

const post = (definition: Parameters<typeof createFunctionCore>[0], body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const reply = createFunctionCore(definition, { logger }).handle({ headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { ...reply, json: JSON.parse(reply.body) as Record<string, unknown> };
};

describe('the function core serving an admission function', () => {
  it('answers an AdmissionResponse and echoes the uid as the request id', () => {
    const reply = post(requireTeam, podCreate);
    expect(reply.status).toBe(200);
    expect(reply.headers['x-kubeloop-reconcile-id']).toBe(podCreate.uid);
    expect(reply.json).toEqual({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'pods need a "team" label' } });
  });

  it('answers a mutation as a JSON patch, and no patch once the change is there (reinvocation)', () => {
    const first = post(addTeam, podCreate);
    expect(first.json.patch).toEqual([{ op: 'add', path: '/metadata/labels/team', value: 'platform' }]);
    const labelled = { ...podCreate, object: { ...podCreate.object!, metadata: { name: 'web', labels: { team: 'platform' } } } };
    expect(post(addTeam, labelled).json).toEqual({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true });
  });

  it('refuses a patch from a validating function with 500 InvalidResponse', () => {
    const reply = post(sneaky, podCreate);
    expect(reply.status).toBe(500);
    expect(reply.json).toMatchObject({ code: 'InvalidResponse', message: 'function sneaky returned an invalid AdmissionResponse: a validating function may not return a patch' });
  });

  it('answers 400 naming the field for a ReconcileRequest or a broken AdmissionRequest', () => {
    const wrong = post(requireTeam, { ...podCreate, kind: 'ReconcileRequest' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.message).toContain('/kind must be equal to constant: "AdmissionRequest"');
    const noDryRun: Partial<AdmissionRequest> = { ...podCreate };
    delete noDryRun.dryRun;
    expect(post(requireTeam, noDryRun).json.message).toBe("invalid AdmissionRequest: (root) must have required property 'dryRun'");
  });

  it('answers 415 to a CloudEvent: admission takes plain JSON', () => {
    const reply = post(requireTeam, podCreate, { 'content-type': 'application/cloudevents+json' });
    expect(reply.status).toBe(415);
    expect(reply.json.message).toMatch(/plain JSON AdmissionRequest/);
  });

  it('answers 500 FunctionError when a mutation is asked of a DELETE without an object', () => {
    const reply = post(addTeam, { ...podCreate, operation: 'DELETE', object: undefined, oldObject: podCreate.object });
    expect(reply.status).toBe(500);
    expect(reply.json.message).toBe('function add-team threw: mutate: a DELETE request has no object to change');
  });
});

describe('the admission contract schema', () => {
  it('requires a status on a denial', () => {
    const reply = post(defineAdmission({ name: 'bare', type: 'validating', admit: () => ({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false }) }), podCreate);
    expect(reply.status).toBe(500);
    expect(reply.json.message).toContain("must have required property 'status'");
  });
});
