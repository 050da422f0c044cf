import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from './kube-client.ts';
import type { ResourceInfo } from './resource-paths.ts';
import { accessChecks, describeCheck, reviewOwnWatchAccess, watchAccessWarning } from './access-review.ts';

const pods: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const podsets: ResourceInfo = { group: 'app.kubeloop.dev', version: 'v1alpha1', apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', plural: 'podsets', namespaced: true };
const nodes: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };

describe('accessChecks', () => {
  it('asks for list and watch of every received kind cluster-wide when the Loop names no namespaces', () => {
    expect(accessChecks([podsets, pods], undefined).map(describeCheck)).toEqual([
      'list podsets.app.kubeloop.dev cluster-wide',
      'watch podsets.app.kubeloop.dev cluster-wide',
      'list pods cluster-wide',
      'watch pods cluster-wide',
    ]);
  });
  it('asks per namespace for namespaced kinds, cluster-wide for cluster-scoped ones, once per check', () => {
    const checks = accessChecks([pods, nodes, pods], new Set(['b', 'a']));
    expect(checks.map(describeCheck)).toEqual([
      'list pods in namespace a',
      'watch pods in namespace a',
      'list pods in namespace b',
      'watch pods in namespace b',
      'list nodes cluster-wide',
      'watch nodes cluster-wide',
    ]);
  });
});

describe('reviewOwnWatchAccess', () => {
  const roles: ResourceInfo = { group: 'rbac.authorization.k8s.io', version: 'v1', apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true };
  const bindings: ResourceInfo = { ...roles, kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false };
  type Review = { spec: { resourceAttributes: { verb: string; resource: string; namespace?: string } } };

  /** Asks with a client answering each SelfSubjectAccessReview with `answer`; what was asked, warned and answered. */
  async function ask(answer: (review: Review) => Promise<boolean>) {
    const asked: string[] = [];
    const request = async ({ path, body }: { path: string; body: Review }) => {
      const { verb, resource, namespace } = body.spec.resourceAttributes;
      asked.push(`${path.split('/').at(-1)} ${verb} ${resource} ${namespace ?? 'cluster-wide'}`);
      return { status: { allowed: await answer(body) } };
    };
    const warned: Array<{ reason: string; msg: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void warned.push(JSON.parse(line) as { reason: string; msg: string }) });
    const verdict = await reviewOwnWatchAccess({ client: { request } as unknown as KubeClient, resources: [roles, bindings], logger, process: 'gateway', what: 'RBAC', consequence: 'hooks are reviewed on the timer only' });
    return { verdict, asked, warned: warned.map(({ reason, msg }) => ({ reason, msg })) };
  }

  it('asks list and watch of every kind cluster-wide, namespaced kinds too, and warns of nothing when all are allowed', async () => {
    const { verdict, asked, warned } = await ask(async () => true);
    expect(verdict).toEqual({ allowed: true });
    expect(asked).toEqual([
      'selfsubjectaccessreviews list roles cluster-wide',
      'selfsubjectaccessreviews watch roles cluster-wide',
      'selfsubjectaccessreviews list clusterrolebindings cluster-wide',
      'selfsubjectaccessreviews watch clusterrolebindings cluster-wide',
    ]);
    expect(warned).toEqual([]);
  });

  it('answers with the denied checks and warns once, with the consequence and the right to grant', async () => {
    const { verdict, warned } = await ask(async (r) => r.spec.resourceAttributes.verb === 'list');
    const reason = 'may not watch roles.rbac.authorization.k8s.io cluster-wide, watch clusterrolebindings.rbac.authorization.k8s.io cluster-wide';
    expect(verdict).toEqual({ allowed: false, message: reason });
    expect(warned).toEqual([{ reason, msg: `the gateway ${reason}: hooks are reviewed on the timer only (grant the gateway's ClusterRole list and watch on roles and clusterrolebindings, as the chart does)` }]);
  });

  it('takes a review that fails for a denial naming why, and warns the same way', async () => {
    const { verdict, warned } = await ask(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    const reason = 'could not ask whether it may watch RBAC (connect ECONNREFUSED)';
    expect(verdict).toEqual({ allowed: false, message: reason });
    expect(warned.map((w) => w.reason)).toEqual([reason]);
  });

  it('names one kind alone, and several as a list ending in "and"', () => {
    const warning = (resources: ResourceInfo[]) => watchAccessWarning({ resources, process: 'router', consequence: 'c' }, 'may not x');
    expect(warning([roles])).toBe("the router may not x: c (grant the router's ClusterRole list and watch on roles, as the chart does)");
    expect(warning([roles, bindings, pods])).toContain('list and watch on roles, clusterrolebindings and pods,');
  });
});
