// JSON Schemas of the contract; the function runtime validates requests and replies, the router replies.
export const objectTargetSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'name'],
  properties: {
    apiVersion: { type: 'string', minLength: 1 },
    kind: { type: 'string', minLength: 1 },
    namespace: { type: 'string' },
    name: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
} as const;

export const kubeObjectSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata'],
  properties: {
    apiVersion: { type: 'string', minLength: 1 },
    kind: { type: 'string', minLength: 1 },
    // Kubernetes guarantees these are strings; a function must not crash on one that is not.
    metadata: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        namespace: { type: 'string' },
        generateName: { type: 'string' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        annotations: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
} as const;

export const jsonPatchOperationSchema = {
  type: 'object',
  required: ['op', 'path'],
  properties: {
    op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
    path: { type: 'string' },
    from: { type: 'string' },
    value: {},
  },
} as const;

export const reconcileRequestSchema = {
  $id: 'kubeloop.dev/v1/ReconcileRequest',
  type: 'object',
  required: ['apiVersion', 'kind', 'loop', 'trigger', 'object', 'children', 'now'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'ReconcileRequest' },
    loop: { type: 'string', minLength: 1 },
    // A namespaced Loop's namespace (absent for a ClusterLoop): the Loop is `<loopNamespace>/<loop>`.
    loopNamespace: { type: 'string', minLength: 1, maxLength: 63 },
    // Echoed in the x-kubeloop-reconcile-id header, so printable ASCII without spaces.
    reconcileId: { type: 'string', pattern: '^[!-~]{1,128}$' },
    trigger: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['ADDED', 'MODIFIED', 'DELETED', 'RESYNC', 'REQUEUE', 'CHILD', 'RELATED'] },
        child: objectTargetSchema,
        related: {
          type: 'object',
          required: ['name', 'object'],
          properties: { name: { type: 'string', minLength: 1 }, object: objectTargetSchema },
        },
      },
    },
    // The primary exists in the API server, so it has a name (a created object may have only generateName).
    object: { ...kubeObjectSchema, properties: { ...kubeObjectSchema.properties, metadata: { ...kubeObjectSchema.properties.metadata, required: ['name'] } } },
    children: { type: 'object', additionalProperties: { type: 'array', items: kubeObjectSchema } },
    related: { type: 'object', additionalProperties: { type: 'array', items: kubeObjectSchema } },
    finalizing: { type: 'boolean' },
    now: { type: 'string', format: 'date-time' },
  },
} as const;

const actionSchema = {
  type: 'object',
  required: ['op'],
  discriminator: { propertyName: 'op' },
  oneOf: [
    {
      type: 'object',
      required: ['op', 'target', 'patch'],
      properties: {
        op: { const: 'patch' },
        target: objectTargetSchema,
        patch: { type: 'array', minItems: 1, items: jsonPatchOperationSchema },
      },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['op', 'object'],
      properties: { op: { const: 'create' }, object: kubeObjectSchema },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['op', 'object'],
      properties: { op: { const: 'apply' }, object: kubeObjectSchema },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['op', 'target'],
      properties: {
        op: { const: 'delete' },
        target: objectTargetSchema,
        preconditions: {
          type: 'object',
          properties: { uid: { type: 'string' }, resourceVersion: { type: 'string' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['op', 'status'],
      properties: { op: { const: 'status' }, status: { type: 'object' } },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['op', 'type', 'reason', 'message'],
      properties: {
        op: { const: 'event' },
        type: { enum: ['Normal', 'Warning'] },
        // events.k8s.io reasons are CamelCase identifiers of at most 128 characters.
        reason: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$', maxLength: 128 },
        message: { type: 'string', maxLength: 1024 },
      },
      additionalProperties: false,
    },
  ],
} as const;

const labelSelectorSchema = {
  type: 'object',
  properties: {
    matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: { key: { type: 'string' }, operator: { enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }, values: { type: 'array', items: { type: 'string' } } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

const requiredResourceSchema = {
  type: 'object',
  required: ['name', 'apiVersion', 'kind'],
  properties: {
    name: { type: 'string', pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
    apiVersion: { type: 'string', minLength: 1 },
    kind: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' },
    namespace: { type: 'string', minLength: 1 },
    names: { type: 'array', items: { type: 'string', minLength: 1 } },
    selector: labelSelectorSchema,
  },
  // Exactly one of names and selector.
  oneOf: [{ required: ['names'], not: { required: ['selector'] } }, { required: ['selector'], not: { required: ['names'] } }],
  additionalProperties: false,
} as const;

export const reconcileResponseSchema = {
  $id: 'kubeloop.dev/v1/ReconcileResponse',
  type: 'object',
  required: ['apiVersion', 'kind', 'actions'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'ReconcileResponse' },
    actions: { type: 'array', items: actionSchema },
    requires: { type: 'array', items: requiredResourceSchema },
    requeueAfterSeconds: { type: 'number', minimum: 0 },
    finalized: { type: 'boolean' },
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: {
        type: { enum: ['temporary', 'permanent'] },
        message: { type: 'string' },
        retryAfterSeconds: { type: 'number', minimum: 0 },
      },
      additionalProperties: false,
    },
  },
} as const;
