// bench:tenants-scale's APF level for tenants: its own seats only, fair per ServiceAccount, and a bad share refused.
import { describe, expect, it } from 'vitest';
import { tenantFlowControl } from './tenants-scale-apf.ts';

describe('tenantFlowControl', () => {
  it('queues every ServiceAccount in a level of its own that neither lends nor borrows, one flow per user', () => {
    const { level, schema } = tenantFlowControl(2) as { level: { spec: { limited: Record<string, unknown> } }; schema: { spec: Record<string, unknown> } };
    expect(level.spec.limited).toMatchObject({ nominalConcurrencyShares: 2, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue' } });
    expect(schema.spec).toMatchObject({ matchingPrecedence: 1000, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:serviceaccounts' } }] }] });
  });
  it('names the setting when the shares are not a positive whole number', () => {
    expect(() => tenantFlowControl(0)).toThrow('BENCH_APF_TENANT_SHARES: "0" is not a positive whole number');
    expect(() => tenantFlowControl(1.5)).toThrow('"1.5"');
  });
});
