import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ITEMS, DEFAULT_MAX_PROPERTIES, overlay, renderSeedCrds, structuralSchema } from './seed-crd-pod-schemas.ts';

const openapi = {
  components: {
    schemas: {
      'x.Pod': {
        description: 'dropped',
        required: ['items'],
        properties: {
          items: { type: 'array', items: { allOf: [{ $ref: '#/components/schemas/x.Item' }] }, 'x-kubernetes-list-type': 'map' },
          labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } },
          port: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
          cpu: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity' },
          empty: { type: 'object' },
          count: { type: 'integer', format: 'int32' },
          meta: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
        },
      },
      'x.Item': { properties: { name: { type: 'string', format: 'weird' } } },
      'x.Loop': { properties: { self: { $ref: '#/components/schemas/x.Loop' } } },
      'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
      'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] },
    },
  },
};

describe('seed CRD pod schemas', () => {
  it('inlines references, bounds lists and maps, writes int-or-string as controller-gen does, and keeps nothing open', () => {
    expect(structuralSchema(openapi, 'x.Pod')).toEqual({
      type: 'object',
      required: ['items'],
      properties: {
        count: { type: 'integer', format: 'int32' },
        cpu: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
        empty: { type: 'object', properties: {} },
        items: { type: 'array', maxItems: DEFAULT_MAX_ITEMS, items: { type: 'object', properties: { name: { type: 'string' } } } },
        labels: { type: 'object', maxProperties: DEFAULT_MAX_PROPERTIES, additionalProperties: { type: 'string' } },
        // An embedded ObjectMeta keeps labels and annotations only: the API server rewrites the rest.
        meta: { type: 'object', properties: { annotations: expect.objectContaining({ type: 'object' }), labels: expect.objectContaining({ type: 'object' }) } },
        port: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
      },
    });
    expect(JSON.stringify(structuralSchema(openapi, 'x.Pod'))).not.toContain('preserve-unknown');
  });

  it('refuses a self-referencing definition (no structural schema exists for it)', () => {
    expect(() => structuralSchema(openapi, 'x.Loop')).toThrow('refers to itself');
  });

  it('lays the seed\'s own rules over the generated schema', () => {
    expect(overlay({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'array', maxItems: 256 } } }, { required: ['a'], properties: { b: { maxItems: 16 } } })).toEqual({
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' }, b: { type: 'array', maxItems: 16 } },
    });
  });

  it('replaces only the schema spans of the CRD files', async () => {
    const full = {
      components: {
        schemas: {
          ...openapi.components.schemas,
          'io.k8s.api.core.v1.PodSpec': { properties: { containers: { type: 'array', items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' } }, restartPolicy: { type: 'string' } } },
          'io.k8s.api.core.v1.Container': { properties: { name: { type: 'string' }, image: { type: 'string' } } },
          'io.k8s.api.core.v1.Volume': { required: ['name'], properties: { name: { type: 'string' } } },
        },
      },
    };
    const texts = await renderSeedCrds(full);
    const podsets = texts.get('podsets.app.kubeloop.dev.yaml')!;
    // What surrounds the pod spec is untouched, and the pod spec prunes (no preserved unknown fields).
    expect(podsets).toContain('shortNames: [ps]');
    expect(podsets).toContain('            status:\n              type: object');
    expect(podsets).toMatch(/spec:\n {22}description: "A core\/v1 PodSpec \(generated/);
    expect(podsets.slice(podsets.indexOf('template:'), podsets.indexOf('            status:'))).not.toContain('preserve-unknown-fields');
    expect(texts.get('watchers.watch.kubeloop.dev.yaml')).toContain('configData:');
  });
});
