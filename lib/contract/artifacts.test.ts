import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { contractArtifacts, contractAjv } from './artifacts.ts';
import { ucs2length } from './schema-runtime.ts';
import { reconcileRequestSchema, reconcileResponseSchema } from './schemas.ts';
import { validateReconcileRequest, validateReconcileResponse } from './validate.ts';

const root = new URL('../../', import.meta.url);

describe('files generated from lib/contract/schemas.ts', () => {
  it.each(Object.entries(contractArtifacts()))('%s is what `npm run schemas` writes (run it after changing schemas.ts)', (path, content) => {
    expect(readFileSync(new URL(path, root), 'utf8')).toBe(content);
  });

  it('publishes schemas that accept and reject what the validators do', () => {
    const ajv = contractAjv({ source: false });
    const request = ajv.compile(JSON.parse(readFileSync(new URL('schemas/reconcile-request.json', root), 'utf8')) as object);
    const response = ajv.compile(JSON.parse(readFileSync(new URL('schemas/reconcile-response.json', root), 'utf8')) as object);
    const fixture = JSON.parse(readFileSync(new URL('test/fixtures/pod-name-label/adds-label-to-annotated-pod.json', root), 'utf8')) as {
      request: Record<string, unknown>;
      response: Record<string, unknown>;
    };
    for (const [value, schema, validate] of [
      [fixture.request, request, validateReconcileRequest],
      [{ ...fixture.request, now: 'yesterday' }, request, validateReconcileRequest],
      [fixture.response, response, validateReconcileResponse],
      [{ ...fixture.response, actions: [{ op: 'event', type: 'Info', reason: 'X', message: '' }] }, response, validateReconcileResponse],
    ] as const) {
      expect(schema(value)).toBe(validate(value).ok);
    }
    expect(request({ ...fixture.request, now: 'yesterday' })).toBe(false);
  });

  it('keeps the source schemas free of anything JSON cannot carry', () => {
    expect(JSON.parse(JSON.stringify(reconcileRequestSchema))).toEqual(reconcileRequestSchema);
    expect(JSON.parse(JSON.stringify(reconcileResponseSchema))).toEqual(reconcileResponseSchema);
  });
});

describe('ucs2length', () => {
  it('counts code points, so a character outside the BMP is one', () => {
    expect(ucs2length('')).toBe(0);
    expect(ucs2length('abc')).toBe(3);
    expect(ucs2length('a😀b')).toBe(3);
    expect(ucs2length('\ud800')).toBe(1);
  });

  it('limits an event message by characters, not UTF-16 units', () => {
    const reply = (message: string) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'event', type: 'Normal', reason: 'R', message }] });
    expect(validateReconcileResponse(reply('😀'.repeat(1024))).ok).toBe(true);
    expect(validateReconcileResponse(reply('😀'.repeat(1025))).ok).toBe(false);
  });
});
