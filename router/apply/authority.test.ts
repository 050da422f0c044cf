import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Action } from '../../lib/contract/types.ts';
import { checkAuthority, checkConfinement, checkKind, isValidApiVersion, type AuthorityContext } from './authority.ts';

const primary = { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'ps', namespace: 'a', uid: 'u-ps' } };
const mine = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mine', namespace: 'a', ownerReferences: [{ apiVersion: 'x', kind: 'PodSet', name: 'ps', uid: 'u-ps', controller: true }] } };
const theirs = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'theirs', namespace: 'a', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-rs', controller: true }] } };
const cache: Record<string, KubernetesObject> = { 'a/mine': mine, 'a/theirs': theirs };

const ctx: AuthorityContext = {
  loop: { id: 'podset', namespace: undefined, for: { apiVersion: primary.apiVersion, kind: 'PodSet' }, owns: [{ apiVersion: 'v1', kind: 'Pod' }] },
  primary,
  lookup: (_v, _k, ns, name) => cache[`${ns}/${name}`],
  targetNamespaced: true,
};
const pod = (name: string, namespace = 'a') => ({ apiVersion: 'v1', kind: 'Pod', namespace, name });

describe('checkAuthority', () => {
  it('allows the primary, its status and events', () => {
    const actions: Action[] = [
      { op: 'patch', target: { apiVersion: primary.apiVersion, kind: 'PodSet', namespace: 'a', name: 'ps' }, patch: [{ op: 'add', path: '/x', value: 1 }] },
      { op: 'status', status: {} },
      { op: 'event', type: 'Normal', reason: 'Ok', message: 'fine' },
    ];
    for (const action of actions) expect(checkAuthority(ctx, action)).toEqual({ allowed: true });
  });
  it('allows creating, deleting and patching owned children in the primary namespace', () => {
    expect(checkAuthority(ctx, { op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'ps-', namespace: 'a' } } }).allowed).toBe(true);
    expect(checkAuthority(ctx, { op: 'delete', target: pod('mine') }).allowed).toBe(true);
    expect(checkAuthority(ctx, { op: 'patch', target: pod('mine'), patch: [{ op: 'remove', path: '/metadata/labels/x' }] }).allowed).toBe(true);
  });
  it('refuses other kinds, other namespaces and children of another controller', () => {
    const refusals: Action[] = [
      { op: 'create', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'a' } } },
      { op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'kube-system' } } },
      { op: 'delete', target: pod('theirs') },
      { op: 'delete', target: pod('mine', 'b') },
      { op: 'patch', target: { apiVersion: primary.apiVersion, kind: 'PodSet', namespace: 'a', name: 'other' }, patch: [{ op: 'remove', path: '/x' }] },
      {
        op: 'create',
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'other', controller: true }] } },
      },
    ];
    for (const action of refusals) {
      const verdict = checkAuthority(ctx, action);
      expect(verdict.allowed, JSON.stringify(action)).toBe(false);
      if (!verdict.allowed) expect(verdict.reason).toMatch(/^Loop podset may not /);
    }
  });
});

describe('checkAuthority by resolved scope', () => {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const clusterScoped: AuthorityContext = {
    ...ctx,
    loop: { ...ctx.loop, owns: [{ apiVersion: rbac, kind: 'ClusterRoleBinding' }] },
    targetNamespaced: false,
  };
  it('refuses a cluster-scoped object to a namespaced primary, whatever namespace the function wrote on it', () => {
    const binding = (namespace?: string) => ({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: 'grab', ...(namespace ? { namespace } : {}) } });
    for (const action of [
      { op: 'create', object: binding('a') },
      { op: 'apply', object: binding('a') },
      { op: 'create', object: binding() },
      { op: 'patch', target: { apiVersion: rbac, kind: 'ClusterRoleBinding', namespace: 'a', name: 'grab' }, patch: [{ op: 'remove', path: '/x' }] },
      { op: 'delete', target: { apiVersion: rbac, kind: 'ClusterRoleBinding', name: 'grab' } },
    ] as Action[]) {
      expect(checkAuthority(clusterScoped, action), JSON.stringify(action)).toEqual({
        allowed: false,
        reason: expect.stringContaining('the kind is cluster-scoped and the primary is namespaced (a)'),
      });
    }
  });
  it('lets a cluster-scoped primary own cluster-scoped objects', () => {
    const clusterPrimary = { ...clusterScoped, primary: { apiVersion: 'example.com/v1', kind: 'Tenant', metadata: { name: 't', uid: 'u-t' } } };
    expect(checkAuthority(clusterPrimary, { op: 'create', object: { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: 'grab' } } })).toEqual({ allowed: true });
  });
});

describe('checkConfinement', () => {
  const teamLoop = { ...ctx.loop, id: 'team-a/podset', namespace: 'team-a' };
  it('lets a namespaced Loop write in its own namespace only', () => {
    expect(checkConfinement(teamLoop, 'create', pod('p', 'team-a'), true)).toEqual({ allowed: true });
    expect(checkConfinement(teamLoop, 'create', pod('p', 'team-b'), true)).toEqual({
      allowed: false,
      reason: "Loop team-a/podset may not create Pod v1 team-b/p: team-b is not the Loop's namespace: a Loop writes only in its own namespace (team-a)",
    });
    expect(checkConfinement(teamLoop, 'delete', { apiVersion: 'v1', kind: 'Pod', name: 'p' }, true).allowed).toBe(false);
  });
  it('refuses a cluster-scoped target to a namespaced Loop, whatever namespace the function wrote', () => {
    const node = { apiVersion: 'v1', kind: 'Node', namespace: 'team-a', name: 'n1' };
    expect(checkConfinement(teamLoop, 'patch', node, false)).toMatchObject({ allowed: false, reason: expect.stringContaining('the kind is cluster-scoped, and a Loop writes only in its own namespace (team-a)') });
  });
  it('leaves a ClusterLoop to the other checks', () => {
    expect(checkConfinement(ctx.loop, 'create', pod('p', 'team-b'), true)).toEqual({ allowed: true });
    expect(checkConfinement(ctx.loop, 'patch', { apiVersion: 'v1', kind: 'Node', name: 'n1' }, false)).toEqual({ allowed: true });
  });
});

describe('checkKind', () => {
  const loop = ctx.loop;
  it('passes the primary kind and owned kinds only', () => {
    expect(checkKind(loop, 'patch', primary.apiVersion, 'PodSet')).toEqual({ allowed: true });
    expect(checkKind(loop, 'create', 'v1', 'Pod')).toEqual({ allowed: true });
    expect(checkKind(loop, 'create', 'v1', 'Secret')).toMatchObject({ allowed: false, reason: 'Loop podset may not create Secret v1: neither the primary kind nor an owned kind' });
    expect(checkKind(loop, 'create', 'unknown.example.com/v1', 'Pod').allowed).toBe(false);
  });
  it('refuses malformed apiVersions before anything looks them up', () => {
    for (const apiVersion of ['', '../../api/v1', 'v1/../x', 'apps/v1/extra', 'Apps/v1', 'apps/1', '/v1', `${'a'.repeat(300)}/v1`, undefined]) {
      const verdict = checkKind(loop, 'create', apiVersion, 'Pod');
      expect(verdict.allowed, String(apiVersion)).toBe(false);
      if (!verdict.allowed) expect(verdict.reason).toContain('not a valid apiVersion');
    }
  });
});

describe('isValidApiVersion', () => {
  it('accepts core, grouped and pre-release versions', () => {
    for (const v of ['v1', 'apps/v1', 'app.kubeloop.dev/v1alpha1', 'batch/v2beta3']) expect(isValidApiVersion(v), v).toBe(true);
  });
});
