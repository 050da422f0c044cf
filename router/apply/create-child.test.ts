import { describe, expect, it } from 'vitest';
import { generatedName, withConcreteName } from './create-child.ts';
import { mayHaveTakenEffect } from '../../lib/kube/transient.ts';
import { KubeApiError } from '../../lib/kube/kube-client.ts';

describe('withConcreteName', () => {
  it('names a generateName child as the API server would: the prefix and 5 random characters', () => {
    const named = withConcreteName({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-pod-' } }, () => 0);
    expect((named.metadata as { name?: string }).name).toBe('web-pod-bbbbb');
    expect(named.metadata?.generateName).toBe('web-pod-');
    expect(generatedName('x'.repeat(70)).length).toBe(63);
    expect(generatedName('p-')).toMatch(/^p-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
  it('keeps a name the function chose', () => {
    const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fixed', generateName: 'web-' } };
    expect(withConcreteName(object)).toBe(object);
  });
});

describe('mayHaveTakenEffect', () => {
  const cut = (code: string, message: string) => Object.assign(new Error(message), { code });
  it('is true when the connection broke after the request could have been sent', () => {
    expect(mayHaveTakenEffect(cut('UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'Response body length does not match content-length header'))).toBe(true);
    expect(mayHaveTakenEffect(cut('UND_ERR_SOCKET', 'other side closed'))).toBe(true);
    expect(mayHaveTakenEffect(new KubeApiError(504, 'Timeout', 'x', { method: 'POST', path: '/api/v1/namespaces/a/pods' }))).toBe(true);
  });
  it('is false when the server answered or never got the request', () => {
    expect(mayHaveTakenEffect(new KubeApiError(503, 'ServiceUnavailable', 'x', { method: 'POST', path: '/api/v1/namespaces/a/pods' }))).toBe(false);
    expect(mayHaveTakenEffect(cut('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6443'))).toBe(false);
    expect(mayHaveTakenEffect(cut('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'))).toBe(false);
  });
});
