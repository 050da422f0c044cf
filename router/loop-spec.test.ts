import { describe, expect, it } from 'vitest';
import { parseLoop } from './loop-spec.ts';

const valid = {
  metadata: { name: 'podset', generation: 2 },
  spec: {
    for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    function: { url: 'http://kubeloop-podset.kubeloop-system.svc:8080/' },
  },
};

describe('parseLoop', () => {
  it('applies defaults and derives the finalizer and field manager', () => {
    const loop = parseLoop(valid);
    expect(loop).toMatchObject({
      name: 'podset',
      generation: 2,
      timeoutMs: 10_000,
      maxConcurrency: 8,
      resyncMs: 600_000,
      metadataOnly: false,
      namespaces: undefined,
      finalizer: 'kubeloop.dev/podset',
      fieldManager: 'kubeloop/podset',
    });
  });
  it('names the bad field', () => {
    const bad = (spec: Record<string, unknown>) => () => parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, ...spec } as never });
    expect(bad({ for: { apiVersion: 'v1', kind: 'pod' } })).toThrow('Loop podset: spec.for.kind "pod" is not a Kind');
    expect(bad({ function: { url: 'nope' } })).toThrow('spec.function.url "nope" is not a URL');
    expect(bad({ function: { url: 'http://x/', timeoutSeconds: 0 } })).toThrow('spec.function.timeoutSeconds must be a number');
    expect(bad({ owns: [{ apiVersion: 'v1' }] })).toThrow('spec.owns[0].kind');
    expect(bad({ selector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } })).toThrow('spec.selector');
    expect(bad({ namespaces: ['Bad_NS'] })).toThrow('spec.namespaces[0]');
  });
});
