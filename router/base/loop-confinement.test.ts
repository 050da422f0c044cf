import { describe, expect, it } from 'vitest';
import type { LoopSpec } from '../../api/loop.ts';
import { clusterScopedKindProblem, namedKinds } from './loop-confinement.ts';
import { loopSpecErrorReason, LoopSpecError, parseLoop } from './loop-spec.ts';

const spec: LoopSpec = {
  for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
  owns: [{ apiVersion: 'v1', kind: 'Pod' }],
  function: { ref: { name: 'podset', port: 8080 } as LoopSpec['function']['ref'] & object, signingSecretRef: { name: 'podset-signing', key: 'secret' } as never },
  serviceAccount: { name: 'podset' } as never,
  related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { label: 'config' } }],
};
const teamLoop = (patch: Partial<LoopSpec> = {}) => ({ kind: 'Loop', metadata: { name: 'podset', namespace: 'team-a', generation: 1 }, spec: { ...spec, ...patch } });

function refusal(loop: ReturnType<typeof teamLoop>): LoopSpecError {
  try {
    parseLoop(loop);
  } catch (error) {
    if (error instanceof LoopSpecError) return error;
    throw error;
  }
  throw new Error('parseLoop accepted the Loop');
}

describe('a namespaced Loop', () => {
  it('defaults every namespace it omits to its own, and carries its identity everywhere', () => {
    expect(parseLoop(teamLoop())).toMatchObject({
      name: 'podset',
      namespace: 'team-a',
      id: 'team-a/podset',
      namespaces: new Set(['team-a']),
      serviceAccount: { namespace: 'team-a', name: 'podset' },
      functionRef: { namespace: 'team-a', name: 'podset' },
      signingSecretRef: { namespace: 'team-a', name: 'podset-signing', key: 'secret' },
      related: [{ name: 'config', namespace: { from: 'primary' } }],
      finalizer: 'loop.kubeloop.dev/podset',
      fieldManager: 'kubeloop/team-a/podset',
    });
  });

  it("defaults its shadow's and canary's ref and signing Secret to its own namespace", () => {
    const versions = teamLoop({
      function: {
        url: 'http://fn.team-a.svc:80/',
        shadow: { ref: { name: 'fn-next', port: 8080 } as never, signingSecretRef: { name: 'next', key: 'k' } as never },
        canary: { ref: { name: 'fn-canary', port: 8080 } as never, weight: 10, errorBudget: { maxErrors: 3, windowSeconds: 60 } },
      },
    });
    expect(parseLoop(versions)).toMatchObject({ shadow: { ref: { namespace: 'team-a', name: 'fn-next' }, signingSecretRef: { namespace: 'team-a', name: 'next' } }, canary: { ref: { namespace: 'team-a', name: 'fn-canary' }, weight: 10 } });
  });

  it('accepts its own namespace spelled out', () => {
    const own = teamLoop({
      namespaces: ['team-a'],
      serviceAccount: { namespace: 'team-a', name: 'podset' },
      related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', nameFrom: { label: 'config' } }],
    });
    expect(parseLoop(own)).toMatchObject({ namespaces: new Set(['team-a']), serviceAccount: { namespace: 'team-a' }, related: [{ namespace: { from: 'primary' } }] });
  });

  it('refuses every field that names another namespace, naming the field and the Loop', () => {
    const cases: Array<[Partial<LoopSpec>, string]> = [
      [{ namespaces: ['team-b'] }, 'spec.namespaces ["team-b"]: a Loop watches its own namespace (team-a) only'],
      [{ namespaces: ['team-a', 'team-b'] }, 'spec.namespaces'],
      [{ serviceAccount: { namespace: 'team-b', name: 'admin' } }, 'spec.serviceAccount.namespace "team-b": a Loop acts as a ServiceAccount of its own namespace (team-a) only'],
      [{ function: { ref: { name: 'fn', namespace: 'team-b', port: 80 } } }, 'spec.function.ref.namespace "team-b": a Loop calls a function of its own namespace (team-a) only'],
      [{ function: { url: 'http://fn.team-a.svc:80/', signingSecretRef: { name: 's', namespace: 'team-b', key: 'k' } } }, 'spec.function.signingSecretRef.namespace "team-b"'],
      [{ function: { url: 'http://fn.team-a.svc:80/', shadow: { ref: { name: 'fn', namespace: 'team-b', port: 80 } } } }, 'spec.function.shadow.ref.namespace "team-b": a Loop calls a function of its own namespace (team-a) only'],
      [{ function: { url: 'http://fn.team-a.svc:80/', canary: { url: 'http://c.team-a.svc/', weight: 5, errorBudget: { maxErrors: 1, windowSeconds: 60 }, signingSecretRef: { name: 's', namespace: 'team-b', key: 'k' } } } }, 'spec.function.canary.signingSecretRef.namespace "team-b"'],
      [{ related: [{ name: 'c', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-b' }] }, 'spec.related[0].namespace "team-b": a Loop reads related objects in its own namespace (team-a) only'],
      [{ related: [{ name: 'c', apiVersion: 'v1', kind: 'ConfigMap', namespace: '*' }] }, 'spec.related[0].namespace "*"'],
    ];
    for (const [patch, message] of cases) {
      const error = refusal(teamLoop(patch));
      expect(error.message, JSON.stringify(patch)).toContain(`Loop team-a/podset: ${message}`);
      expect(loopSpecErrorReason(error)).toBe('InvalidSpec');
    }
  });

  it('still needs a ServiceAccount, reported as ServiceAccountRequired', () => {
    const { serviceAccount: _none, ...rest } = spec;
    const error = refusal({ ...teamLoop(), spec: rest as LoopSpec });
    expect(loopSpecErrorReason(error)).toBe('ServiceAccountRequired');
  });

  it('a ClusterLoop keeps reaching other namespaces and its own finalizer and field manager', () => {
    const cluster = parseLoop({
      kind: 'ClusterLoop',
      metadata: { name: 'podset' },
      spec: { ...spec, serviceAccount: { namespace: 'ops', name: 'podset' }, function: { url: 'http://fn.ops.svc:80/' }, namespaces: ['team-a', 'team-b'], related: [] },
    });
    expect(cluster).toMatchObject({ id: 'podset', namespace: undefined, finalizer: 'kubeloop.dev/podset', fieldManager: 'kubeloop/podset', namespaces: new Set(['team-a', 'team-b']) });
  });
});

describe('clusterScopedKindProblem', () => {
  it('names the first cluster-scoped kind of spec.for, spec.owns or spec.related', () => {
    const config = parseLoop(teamLoop({ owns: [{ apiVersion: 'v1', kind: 'Pod' }, { apiVersion: 'v1', kind: 'Node' }] }));
    const kinds = namedKinds(config).map((k) => ({ ...k, namespaced: k.ref.kind !== 'Node' }));
    expect(kinds.map((k) => k.field)).toEqual(['spec.for', 'spec.owns[0]', 'spec.owns[1]', 'spec.related[0]']);
    expect(clusterScopedKindProblem(kinds)).toEqual({
      field: 'spec.owns[1]',
      problem: 'Node (v1) is cluster-scoped: a Loop reaches only namespaced kinds in its own namespace; a cluster-scoped kind needs a ClusterLoop',
    });
    expect(clusterScopedKindProblem(kinds.map((k) => ({ ...k, namespaced: true })))).toBeUndefined();
  });
});
