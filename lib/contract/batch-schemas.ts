// JSON Schemas of the plain JSON batch (docs/contract.md, "Batches"), published as schemas/reconcile-batch-*.json.
// Items refer to the ReconcileRequest and ReconcileResponse schemas by $id (relative: kubeloop.dev/v1/...); each item is still validated on
// its own by whoever answers it (a bad item is that item's error, not the batch's).
import { MAX_BATCH_ITEMS } from './batch.ts';

export const reconcileBatchRequestSchema = {
  $id: 'kubeloop.dev/v1/ReconcileBatchRequest',
  type: 'object',
  required: ['kind', 'items'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'ReconcileBatchRequest' },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: 'ReconcileRequests of one Loop, each with a reconcileId unique in the batch.',
      items: { allOf: [{ $ref: 'ReconcileRequest' }, { required: ['reconcileId'] }] },
    },
  },
} as const;

export const reconcileBatchResponseSchema = {
  $id: 'kubeloop.dev/v1/ReconcileBatchResponse',
  type: 'object',
  required: ['apiVersion', 'kind', 'items'],
  properties: {
    apiVersion: { const: 'kubeloop.dev/v1' },
    kind: { const: 'ReconcileBatchResponse' },
    items: {
      type: 'array',
      description: 'One entry per request item, by its reconcileId: its ReconcileResponse, or the error its own call would have answered with.',
      items: {
        type: 'object',
        required: ['reconcileId'],
        properties: { reconcileId: { type: 'string', minLength: 1 } },
        oneOf: [
          { required: ['response'], properties: { response: { $ref: 'ReconcileResponse' } } },
          {
            required: ['error'],
            properties: {
              error: {
                type: 'object',
                required: ['statusCode', 'code', 'message'],
                properties: { statusCode: { type: 'integer', minimum: 400, maximum: 599 }, code: { type: 'string' }, message: { type: 'string' } },
              },
            },
          },
        ],
      },
    },
  },
} as const;
