import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateReconcileRequest, validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { KubeObject, ReconcileRequest } from '../../lib/sdk/index.ts';
import { configHash, reconcileConfigReloader } from './reconcile.ts';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/config-reloader/', import.meta.url));
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as { request: ReconcileRequest; response: unknown }] as const);

describe('config-reloader', () => {
  it.each(fixtures)('answers the recorded request %s as recorded (with related objects)', (_file, fixture) => {
    expect(validateReconcileRequest(fixture.request).ok).toBe(true);
    expect(validateReconcileResponse(fixture.response).ok).toBe(true);
    expect(reconcileConfigReloader(fixture.request)).toEqual(fixture.response);
  });

  it('hashes the same content the same whatever the key order, and different content differently', () => {
    const cm = (data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data });
    expect(configHash(cm({ a: '1', b: '2' }))).toBe(configHash(cm({ b: '2', a: '1' })));
    expect(configHash(cm({ a: '1' }))).not.toBe(configHash(cm({ a: '2' })));
  });
});
