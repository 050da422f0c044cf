// Which configuration objects hooks land in: cluster hooks alone in the cluster pair, tenants bucketed by
// namespace, a bucket over its byte bound leaving out the largest tenant's hooks only, tenant pairs named to
// sort (and so run) before the cluster pair, and a hook's entry bounded in bytes.
import { describe, expect, it } from 'vitest';
import type { AdmissionHookSpec } from '../../api/admission-hook.ts';
import { hookBoundProblems } from '../base/hook-bounds.ts';
import { checkConfigurationName, configurationLabelValue, shardConfigurations, tenantBucket, tenantConfigurationName } from './hook-configuration-shards.ts';
import { DEV_HOOK_POLICY, resolveHook, type ResolvedHook } from '../base/hook-spec.ts';

const rule = (resources: string[]) => ({ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources });

function hook(name: string, namespace: string | undefined, spec: Partial<AdmissionHookSpec> = {}): ResolvedHook {
  const result = resolveHook(
    {
      metadata: { name, ...(namespace ? { namespace } : {}) },
      spec: { type: 'validating', rules: [rule(['configmaps'])], function: { url: 'http://127.0.0.1:1/admit' }, serviceAccount: { namespace: namespace ?? 'ops', name: 'sa' }, ...spec },
    },
    { ...DEV_HOOK_POLICY, maxEntryBytes: 1024 * 1024 },
  );
  if (!result.ok) throw new Error(result.message);
  return result.hook;
}

const options = { name: 'kubeloop-admission-hooks', target: { urlBase: 'https://127.0.0.1:1' }, kubeloopNamespace: 'kubeloop', buckets: 4, maxBytes: 64 * 1024 };
/** A hook whose entry takes about `kib` KiB: one long resource name per KiB. */
const bulky = (name: string, namespace: string, kib: number) => hook(name, namespace, { rules: [rule(Array.from({ length: kib }, (_, i) => `r${i}${'x'.repeat(1000)}`))] });

describe('the webhook configurations of cluster and namespaced hooks', () => {
  it('keeps namespaced hooks out of the cluster pair, in the pair of their namespace bucket', () => {
    const sharded = shardConfigurations([hook('cluster-gate', undefined), hook('gate', 'team-a'), hook('gate', 'team-b')], new Map(), options);
    const [cluster, ...tenants] = sharded.pairs;
    expect(cluster!.name).toBe('kubeloop-admission-hooks');
    expect(cluster!.validating.webhooks?.map((w) => w.name)).toEqual(['cluster-gate.hooks.kubeloop.dev']);
    for (const namespace of ['team-a', 'team-b']) {
      const name = tenantConfigurationName('kubeloop-admission-hooks', tenantBucket(namespace, 4));
      const pair = tenants.find((p) => p.name === name);
      const selectors = pair!.validating.webhooks!.flatMap((w) => w.namespaceSelector?.matchExpressions ?? []).filter((e) => e.operator === 'In');
      expect(selectors.some((e) => e.values?.includes(namespace))).toBe(true);
    }
    expect(sharded.pairs.every((pair) => pair.mutating.metadata?.labels?.['kubeloop.dev/hook-configuration'] === 'kubeloop-admission-hooks')).toBe(true);
    expect(sharded.leftOut.size).toBe(0);
  });

  it('leaves out the hooks of the namespace taking the most of an overfull bucket, never another namespace or a cluster hook', () => {
    const one = { ...options, buckets: 1 };
    const hooks = [hook('cluster-gate', undefined), hook('gate', 'team-b'), bulky('big-1', 'team-a', 30), bulky('big-2', 'team-a', 30), bulky('big-3', 'team-a', 20)];
    const sharded = shardConfigurations(hooks, new Map(), one);
    expect([...sharded.leftOut.keys()]).toEqual(['team-a/big-1']);
    expect(sharded.leftOut.get('team-a/big-1')).toMatch(/over the 65536 bytes one configuration may hold .*namespace team-a's hooks take \d+ of them/);
    const tenants = sharded.pairs[1]!;
    expect(Buffer.byteLength(JSON.stringify(tenants.validating))).toBeLessThanOrEqual(64 * 1024);
    expect(tenants.validating.webhooks!.some((w) => w.namespaceSelector?.matchExpressions?.some((e) => e.values?.includes('team-b')))).toBe(true);
    expect(sharded.pairs[0]!.validating.webhooks).toHaveLength(1);
  });

  it('writes no tenant pair for a bucket without hooks', () => {
    expect(shardConfigurations([hook('cluster-gate', undefined)], new Map(), options).pairs.map((p) => p.name)).toEqual(['kubeloop-admission-hooks']);
  });

  it('names tenant configurations to sort before the cluster one, so the API server runs tenant mutations first', () => {
    for (const name of ['kubeloop-admission-hooks', 'a', 'kubeloop-admission-hooks-suite-x', 'zz']) {
      expect(tenantConfigurationName(name, 15) < name).toBe(true);
      expect(() => checkConfigurationName(name, 16)).not.toThrow();
    }
    expect(() => checkConfigurationName('0-0', 16)).toThrow(/must sort after its tenant configurations/);
  });

  it('spreads namespaces over the buckets and keeps label values short', () => {
    const buckets = new Set(Array.from({ length: 200 }, (_, i) => tenantBucket(`team-${i}`, 16)));
    expect(buckets.size).toBe(16);
    expect(configurationLabelValue('x'.repeat(100))).toHaveLength(63);
  });
});

describe('the bounds of one hook', () => {
  const spec = (rules: AdmissionHookSpec['rules']): AdmissionHookSpec => ({ type: 'validating', rules, function: { url: 'http://fn.ns.svc/admit' } });
  it('refuses an entry over --max-hook-entry-bytes', () => {
    expect(hookBoundProblems(spec([rule(['x'.repeat(40_000)])]), 'team-a')).toEqual([expect.stringContaining('over the 32768 one hook\'s webhook entry may take')]);
    expect(hookBoundProblems(spec([rule(['configmaps'])]), 'team-a')).toEqual([]);
  });

  it("keeps a namespaced hook off kubeloop's own API groups, and lets a cluster hook name them", () => {
    for (const group of ['kubeloop.dev', 'history.kubeloop.dev', '*']) {
      expect(hookBoundProblems(spec([{ operations: ['UPDATE'], apiGroups: [group], apiVersions: ['*'], resources: ['admissionhooks/status'] }]), 'team-a')).toEqual([expect.stringContaining(`apiGroup "${group}" reaches kubeloop's own resources`)]);
    }
    expect(hookBoundProblems(spec([{ operations: ['UPDATE'], apiGroups: ['kubeloop.dev'], apiVersions: ['*'], resources: ['loops'] }]), undefined)).toEqual([]);
    // A seed kind's group is a team's objects like any other.
    expect(hookBoundProblems(spec([{ operations: ['CREATE'], apiGroups: ['app.kubeloop.dev'], apiVersions: ['v1alpha1'], resources: ['podsets'] }]), 'team-a')).toEqual([]);
  });
});
