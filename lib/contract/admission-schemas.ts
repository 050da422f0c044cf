// JSON Schemas of the admission contract: the runtime validates requests and replies, the gateway replies.
import { jsonPatchOperationSchema, kubeObjectSchema } from './schemas.ts';

const groupVersionKindSchema = {
  type: 'object',
  required: ['group', 'version', 'kind'],
  properties: { group: { type: 'string' }, version: { type: 'string', minLength: 1 }, kind: { type: 'string', minLength: 1 } },
} as const;

const groupVersionResourceSchema = {
  type: 'object',
  required: ['group', 'version', 'resource'],
  properties: { group: { type: 'string' }, version: { type: 'string', minLength: 1 }, resource: { type: 'string', minLength: 1 } },
} as const;

export const admissionRequestSchema = {
  $id: 'kubeloop.dev/v1/AdmissionRequest',
  type: 'object',
  required: ['apiVersion', 'kind', 'hook', 'uid', 'operation', 'requestKind', 'resource', 'userInfo', 'dryRun', 'context', 'now'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'AdmissionRequest' },
    hook: { type: 'string', minLength: 1 },
    // A namespaced AdmissionHook's namespace (absent for a ClusterAdmissionHook): the hook is `<hookNamespace>/<hook>`.
    hookNamespace: { type: 'string', minLength: 1, maxLength: 63 },
    // Echoed in a header, so printable ASCII without spaces (the API server sends a UUID).
    uid: { type: 'string', pattern: '^[!-~]{1,128}$' },
    operation: { enum: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] },
    requestKind: groupVersionKindSchema,
    resource: groupVersionResourceSchema,
    subResource: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    object: kubeObjectSchema,
    oldObject: kubeObjectSchema,
    userInfo: {
      type: 'object',
      properties: {
        username: { type: 'string' },
        uid: { type: 'string' },
        groups: { type: 'array', items: { type: 'string' } },
        extra: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      },
    },
    dryRun: { type: 'boolean' },
    options: { type: 'object' },
    context: { type: 'object', additionalProperties: { anyOf: [kubeObjectSchema, { type: 'null' }] } },
    now: { type: 'string', format: 'date-time' },
  },
} as const;

export const admissionResponseSchema = {
  $id: 'kubeloop.dev/v1/AdmissionResponse',
  type: 'object',
  required: ['apiVersion', 'kind', 'allowed'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'AdmissionResponse' },
    allowed: { type: 'boolean' },
    status: {
      type: 'object',
      required: ['message'],
      properties: {
        code: { type: 'integer', minimum: 400, maximum: 599 },
        reason: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$', maxLength: 128 },
        message: { type: 'string', minLength: 1, maxLength: 4096 },
      },
      additionalProperties: false,
    },
    patch: { type: 'array', items: jsonPatchOperationSchema },
    warnings: { type: 'array', items: { type: 'string', maxLength: 1024 } },
    auditAnnotations: {
      type: 'object',
      // The API server prefixes keys with "<webhook name>/"; the key must be a valid qualified-name part.
      propertyNames: { pattern: '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$' },
      additionalProperties: { type: 'string' },
    },
  },
  // A denial needs a reason for the client; an allowed reply carries none.
  if: { properties: { allowed: { const: false } } },
  then: { required: ['status'] },
  additionalProperties: false,
} as const;
