// The policy table's TypeScript side: every case the chart's policies must refuse is refused by the router's
// parseLoop or the gateway's resolveHook too, and the baselines pass both (test/e2e/admission-policy-table.test.ts
// runs the same cases against the policies on the real API server).
import { describe, expect, it } from 'vitest';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { Loop } from '../../api/loop.ts';
import { parseLoop } from '../../router/base/loop-spec.ts';
import { resolveHook } from '../../webhooks/base/hook-spec.ts';
import { caseObject, POLICY_CASES, type PolicyCase } from './admission-policy-cases.ts';

/** The TypeScript check's refusal, or undefined when it admits the object. */
function tsRefusal(c: Pick<PolicyCase, 'kind' | 'spec'> | { kind: PolicyCase['kind']; spec?: undefined }): string | undefined {
  const object = caseObject(c, 'probe', 'team-a', 'team-b');
  if (c.kind === 'Loop') {
    try {
      parseLoop(object as unknown as Loop);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }
  const resolution = resolveHook(object as unknown as AdmissionHook);
  return resolution.ok ? undefined : resolution.message;
}

describe('the admission policy table, TypeScript side', () => {
  it('admits both baselines', () => {
    expect(tsRefusal({ kind: 'Loop' })).toBeUndefined();
    expect(tsRefusal({ kind: 'AdmissionHook' })).toBeUndefined();
  });

  it.each(POLICY_CASES.map((c) => [`${c.kind}: ${c.name}`, c] as const))('refuses %s', (_, c) => {
    expect(tsRefusal(c)).toBeDefined();
  });
});
