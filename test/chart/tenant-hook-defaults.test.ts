// The chart passes every tenant bound on hooks as a flag (its policy needs the timeout cap too), so its values'
// defaults must be the gateway's own: one default, checked here rather than written twice unchecked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_BREAKER_COOL_DOWN_SECONDS, DEFAULT_BREAKER_THRESHOLD } from '../../webhooks/gateway/circuit-breaker.ts';
import { DEFAULT_EXCLUDED_IDENTITIES } from '../../webhooks/base/excluded-identities.ts';
import { DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS } from '../../webhooks/base/namespaced-hook-rules.ts';
import { DEFAULT_TENANT_MAX_HOOKS } from '../../webhooks/lifecycle/tenant-hook-limit.ts';
import { CHART_DIR } from './values-table.ts';

describe("the chart's tenant hook values", () => {
  it("default to the gateway's defaults", () => {
    const { webhook } = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as {
      webhook: { namespacedHooks: Record<string, unknown>; circuitBreaker: Record<string, unknown> };
    };
    expect(webhook.namespacedHooks).toEqual({ maxTimeoutSeconds: DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS, maxPerNamespace: DEFAULT_TENANT_MAX_HOOKS, excludeIdentities: [...DEFAULT_EXCLUDED_IDENTITIES] });
    expect(webhook.circuitBreaker).toEqual({ failures: DEFAULT_BREAKER_THRESHOLD, coolDownSeconds: DEFAULT_BREAKER_COOL_DOWN_SECONDS });
  });
});
