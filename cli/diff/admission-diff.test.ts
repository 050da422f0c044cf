import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AdmissionResponse } from '../../lib/contract/admission-types.ts';
import { admissionSubject, compareAdmission, decisionOf, parseRecordedAdmission } from './admission-diff.ts';

const NOW = new Date('2026-11-26T08:00:00Z');
const fixture = (path: string) => readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), 'utf8');
const allow = (extra: Partial<AdmissionResponse> = {}): AdmissionResponse => ({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true, ...extra });

describe('recorded admission requests', () => {
  it('turns an AdmissionReview as the API server sent it into the request the gateway sends, for this hook', () => {
    const parsed = parseRecordedAdmission('pod-create-annotated.json', fixture('admission/pod-create-annotated.json'), { name: 'my-hook' }, NOW);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.request).toMatchObject({ kind: 'AdmissionRequest', hook: 'my-hook', operation: 'CREATE', namespace: 'shop', context: {}, now: NOW.toISOString() });
    expect(admissionSubject(parsed.request, 'x.json')).toBe('CREATE Pod shop/web-864c6df646-*');
  });

  it('reads the request of a recorded kubeloop fixture as it is', () => {
    const parsed = parseRecordedAdmission('f.json', fixture('watcher-sidecar/missing-watcher-warns.json'), { name: 'watcher-sidecar' }, NOW);
    expect(parsed.ok && parsed.request.context).toEqual({ watcher: null });
  });

  it('says why a file is neither', () => {
    expect(parseRecordedAdmission('f.json', '{"kind":"ConfigMap"}', { name: 'h' }, NOW)).toMatchObject({ ok: false, error: expect.stringContaining('not an AdmissionReview') });
    expect(parseRecordedAdmission('f.json', 'nope', { name: 'h' }, NOW)).toMatchObject({ ok: false, error: expect.stringContaining('not valid JSON') });
  });
});

describe('compareAdmission', () => {
  const parsed = parseRecordedAdmission('p.json', fixture('admission/pod-create-annotated.json'), { name: 'h' }, NOW);
  if (!parsed.ok) throw new Error(parsed.error);
  const request = parsed.request;

  it('reports a request the new version denies', () => {
    const deny: AdmissionResponse = { apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false, status: { message: 'no team label' } };
    const differences = compareAdmission(request, allow(), deny);
    expect(differences.map((d) => d.path)).toEqual(['/allowed', '/status']);
    expect(decisionOf(deny)).toBe('denied (403): no team label');
  });

  it('compares patches by their effect on the object, not their text', () => {
    const one = allow({ patch: [{ op: 'add', path: '/metadata/labels/team', value: 'a' }] });
    const other = allow({ patch: [{ op: 'replace', path: '/metadata/labels', value: { ...request.object?.metadata?.labels, team: 'a' } }] });
    expect(compareAdmission(request, one, other)).toEqual([]);
    expect(compareAdmission(request, one, allow({ patch: [{ op: 'add', path: '/metadata/labels/team', value: 'b' }] }))).toHaveLength(1);
  });

  it('sees a new warning, and nothing when the answers are equal', () => {
    expect(compareAdmission(request, allow(), allow({ warnings: ['soon denied'] }))).toHaveLength(1);
    expect(compareAdmission(request, allow(), allow())).toEqual([]);
  });
});
