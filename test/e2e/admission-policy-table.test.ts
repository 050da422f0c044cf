// The chart's Loop and hook admission policies, as rendered, against the real API server, case by case from the
// one table the TypeScript checks are tested with (test/chart/admission-policy-cases.ts): a user bound only to
// admin in one namespace is refused every field the router or the gateway would refuse later.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { caseObject, POLICY_CASES, type PolicyKind } from '../chart/admission-policy-cases.ts';
import { installCrds } from '../support/router-harness.ts';
import { installTenantPolicies, namespaceAdmin, refusalOf, type TenantPolicies } from './tenant-admin.ts';

let suite: ClusterSuite;
let own: string;
let other: string;
let client: KubeClient;
let admin: KubeClient;
let policies: TenantPolicies;
const pathOf = (kind: PolicyKind) => `/apis/kubeloop.dev/v1alpha1/namespaces/${own}/${kind === 'Loop' ? 'loops' : 'admissionhooks'}`;
const attempt = (kind: PolicyKind, spec?: (own: string, other: string) => Record<string, unknown>) =>
  refusalOf(admin, pathOf(kind), caseObject(spec ? { kind, spec } : { kind }, 'probe', own, other, policies.label));

beforeAll(async () => {
  suite = await setupClusterSuite('policy-table');
  own = suite.namespace;
  other = `${own}-b`;
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: other } } });
  await installCrds(client, ['loops.kubeloop.dev.yaml', 'admissionhooks.kubeloop.dev.yaml']);
  policies = await installTenantPolicies(client, suite.binaries.helm, own);
  admin = await namespaceAdmin(client, own, `alice-${own}`);
  // The aggregation controller adds the kinds to admin, and the API server loads the policies, shortly after.
  await eventually('admin may create the baseline Loop and AdmissionHook', async () => (await attempt('Loop')) === undefined && (await attempt('AdmissionHook')) === undefined);
  await eventually('the policies in effect', async () => (await attempt('Loop', () => ({ namespaces: [other] }))) !== undefined && (await attempt('AdmissionHook', () => ({ namespaceSelector: {} }))) !== undefined);
});

afterAll(async () => {
  await policies?.cleanup();
  await client?.request({ method: 'DELETE', path: `/api/v1/namespaces/${other}` }).catch(() => undefined);
  await client?.close();
  await suite?.cleanup();
});

describe('as a namespace admin, the chart policies refuse what the TypeScript checks refuse', () => {
  it.each(POLICY_CASES.map((c) => [`${c.kind}: ${c.name}`, c] as const))('%s', async (_, c) => {
    expect(await attempt(c.kind, c.spec)).toContain(c.policy);
  });
});
