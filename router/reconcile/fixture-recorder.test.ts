import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { FixtureRecorder } from './fixture-recorder.ts';

describe('FixtureRecorder', () => {
  it('writes fixtures readable by the owner only (0600), in a 0700 directory it creates', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'kubeloop-record-')), 'fixtures');
    const request = { loop: 'l', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' } }, now: 'now' } as ReconcileRequest;
    const file = new FixtureRecorder(dir).record(request, { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
