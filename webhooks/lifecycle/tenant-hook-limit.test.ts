// The per-tenant maximum of AdmissionHooks served: the oldest served, the newest left out with a reason.
import { describe, expect, it } from 'vitest';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { hooksOverTenantLimit } from './tenant-hook-limit.ts';

const hook = (namespace: string | undefined, name: string, created: string) => ({ id: namespace ? `${namespace}/${name}` : name, name, ...(namespace ? { namespace } : {}), created }) as unknown as ResolvedHook & { created: string };

describe('hooksOverTenantLimit', () => {
  it('serves the oldest of each namespace, leaves out the newest, counts no cluster hook', () => {
    const hooks = [
      hook('team-a', 'newest', '2026-01-03T00:00:00Z'),
      hook('team-a', 'oldest', '2026-01-01T00:00:00Z'),
      hook('team-a', 'b-same-second', '2026-01-02T00:00:00Z'),
      hook('team-a', 'a-same-second', '2026-01-02T00:00:00Z'),
      hook('team-b', 'only', '2026-01-09T00:00:00Z'),
      hook(undefined, 'c1', '2026-01-01T00:00:00Z'),
      hook(undefined, 'c2', '2026-01-01T00:00:00Z'),
      hook(undefined, 'c3', '2026-01-01T00:00:00Z'),
    ];
    const over = hooksOverTenantLimit(hooks, 2, (h) => (h as ResolvedHook & { created: string }).created);
    expect([...over.keys()].sort()).toEqual(['team-a/b-same-second', 'team-a/newest']);
    expect(over.get('team-a/newest')).toContain('namespace team-a has 4 AdmissionHooks the gateway could serve; it serves the 2 oldest (--tenant-max-hooks)');
  });
});
