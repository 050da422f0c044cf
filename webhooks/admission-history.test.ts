import { describe, expect, it } from 'vitest';
import { admissionRecord, AdmissionHistory, patchLines } from './gateway/admission-history.ts';
import { entryScopes, visibleEntries, scopeKey } from './history/admission-history-access.ts';
import type { AdmissionRequest } from './gateway/admission-review.ts';
import { readWebhookConfig } from './config.ts';

const review = (namespace: string, name: string, resource = 'configmaps'): AdmissionRequest => ({
  uid: `uid-${name}`,
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource },
  namespace,
  name,
  operation: 'CREATE',
  userInfo: { username: 'alice', groups: ['system:authenticated'] },
});
const at = new Date('2026-11-28T12:00:00.000Z');
const patch = (ops: unknown[]) => Buffer.from(JSON.stringify(ops)).toString('base64');

describe('admissionRecord', () => {
  it('keeps the request, the answer, the patch operations and the trace id, started when the review arrived', () => {
    const record = admissionRecord(review('team-a', 'web'), { uid: 'uid-web', allowed: true, patchType: 'JSONPatch', patch: patch([{ op: 'add', path: '/metadata/labels/team', value: 'a' }]) }, 'patched', 12.345, at, 'f'.repeat(32));
    expect(record).toEqual({
      startedAt: '2026-11-28T11:59:59.988Z',
      uid: 'uid-web',
      operation: 'CREATE',
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      kind: 'ConfigMap',
      namespace: 'team-a',
      name: 'web',
      user: 'alice',
      outcome: 'patched',
      allowed: true,
      patch: ['add /metadata/labels/team'],
      ms: 12.3,
      traceId: 'f'.repeat(32),
    });
  });

  it('keeps a denial with its code and message, cut short when long', () => {
    const record = admissionRecord(review('team-a', 'web'), { uid: 'u', allowed: false, status: { code: 403, message: 'x'.repeat(2000) } }, 'denied', 1, at);
    expect(record.code).toBe(403);
    expect(record.message).toHaveLength(503);
  });

  it('summarises a large patch: the first ten operations and how many more', () => {
    const lines = patchLines(patch(Array.from({ length: 25 }, (_, i) => ({ op: 'add', path: `/a/${i}`, value: i }))));
    expect(lines?.lines).toHaveLength(10);
    expect(lines?.omitted).toBe(15);
    expect(patchLines(Buffer.from('not json').toString('base64'))).toEqual({ lines: ['(not a JSON patch)'], omitted: 0 });
  });
});

describe('AdmissionHistory', () => {
  const record = (name: string) => admissionRecord(review('ns', name), { uid: name, allowed: true }, 'allowed', 1, at);

  it('keeps the last N admissions per hook, oldest first', () => {
    const history = new AdmissionHistory({ perHook: 2, hooks: 10 });
    for (const name of ['a', 'b', 'c']) history.add('ns/hook', record(name));
    expect(history.history('ns/hook').map((e) => e.name)).toEqual(['b', 'c']);
  });

  it('drops the least recently admitting hook when it holds too many hooks', () => {
    const history = new AdmissionHistory({ perHook: 5, hooks: 2 });
    history.add('one', record('a'));
    history.add('two', record('b'));
    history.add('one', record('c'));
    history.add('three', record('d'));
    expect(history.history('two')).toEqual([]);
    expect(history.history('one')).toHaveLength(2);
    expect(history.size).toBe(2);
  });

  it('keeps nothing when turned off', () => {
    const history = new AdmissionHistory({ perHook: 0, hooks: 2 });
    history.add('one', record('a'));
    expect(history.history('one')).toEqual([]);
  });
});

describe('visibleEntries', () => {
  it("shows only the admissions of objects the caller may get, and says how many others there are and of what", () => {
    const entries = [admissionRecord(review('team-a', 'one'), { uid: '1', allowed: true }, 'allowed', 1, at), admissionRecord(review('team-b', 'two'), { uid: '2', allowed: true }, 'allowed', 1, at), admissionRecord(review('team-b', 'three'), { uid: '3', allowed: false }, 'denied', 1, at)];
    const scopes = entryScopes(entries);
    expect(scopes).toEqual([
      { verb: 'get', group: '', resource: 'configmaps', namespace: 'team-a' },
      { verb: 'get', group: '', resource: 'configmaps', namespace: 'team-b' },
    ]);
    const { shown, withheld } = visibleEntries(entries, new Set([scopeKey(scopes[0]!)]));
    expect(shown.map((e) => e.name)).toEqual(['one']);
    expect(withheld).toEqual({ count: 2, why: ['of configmaps in namespace team-b, which you may not get'] });
  });
});

describe('the admission history settings', () => {
  it('keep 50 admissions of 500 hooks and serve no API by default', () => {
    expect(readWebhookConfig([], {}).admissionHistory).toEqual({ perHook: 50, hooks: 500 });
  });

  it('serve the API with its certificate, and refuse a port without one naming the flags', () => {
    const args = ['--admission-history-api-port', '8444', '--admission-history-tls-cert-file', 'tls.crt', '--admission-history-tls-key-file', 'tls.key'];
    expect(readWebhookConfig(args, {}).admissionHistory.api).toEqual({ port: 8444, certFile: 'tls.crt', keyFile: 'tls.key' });
    expect(() => readWebhookConfig(['--admission-history-api-port', '8444'], {})).toThrow('--admission-history-api-port needs --admission-history-tls-cert-file and --admission-history-tls-key-file');
    expect(() => readWebhookConfig(['--admission-history-per-hook', '-1'], {})).toThrow('--admission-history-per-hook');
  });
});
