import { describe, expect, it } from 'vitest';
import { KubeApiError } from './kube-client.ts';
import { isTransientApiFailure, retryTransient } from './transient.ts';

const apiError = (status: number, reason: string) => new KubeApiError(status, reason, 'x', { method: 'GET', path: '/api/v1/namespaces/kubeloop/secrets/tls' });
const socketError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('isTransientApiFailure', () => {
  it('retries throttling, server trouble and connections refused or cut', () => {
    expect(isTransientApiFailure(apiError(429, 'TooManyRequests'))).toBe(true);
    expect(isTransientApiFailure(apiError(503, 'ServiceUnavailable'))).toBe(true);
    expect(isTransientApiFailure(socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6443'))).toBe(true);
    expect(isTransientApiFailure(socketError('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'))).toBe(true);
    expect(isTransientApiFailure(new TypeError('fetch failed', { cause: socketError('UND_ERR_SOCKET', 'other side closed') }))).toBe(true);
  });
  it('does not retry the caller mistakes or an untrusted server', () => {
    expect(isTransientApiFailure(apiError(403, 'Forbidden'))).toBe(false);
    expect(isTransientApiFailure(apiError(409, 'Conflict'))).toBe(false);
    expect(isTransientApiFailure(apiError(422, 'Invalid'))).toBe(false);
    expect(isTransientApiFailure(socketError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'))).toBe(false);
    expect(isTransientApiFailure(new Error('certificate Secret kubeloop/tls: still conflicting'))).toBe(false);
  });
});

describe('retryTransient', () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, wait: async (ms: number) => void (t += ms), backoff: { baseMs: 1000, maxMs: 1000 } };
  };

  it('carries an operation through an API server restart', async () => {
    const failures = [socketError('ECONNREFUSED', 'refused'), apiError(503, 'ServiceUnavailable'), apiError(429, 'TooManyRequests')];
    const retried: unknown[] = [];
    const result = await retryTransient(
      async () => {
        const failure = failures.shift();
        if (failure) throw failure;
        return 'rotated';
      },
      { timeoutMs: 10_000, onRetry: (e) => retried.push(e), ...clock() },
    );
    expect(result).toBe('rotated');
    expect(retried).toHaveLength(3);
  });
  it('fails at once on a permanent error', async () => {
    let calls = 0;
    const forbidden = apiError(403, 'Forbidden');
    await expect(retryTransient(async () => { calls++; throw forbidden; }, { timeoutMs: 10_000, ...clock() })).rejects.toBe(forbidden);
    expect(calls).toBe(1);
  });
  it('gives up with the last failure once the time is spent', async () => {
    let calls = 0;
    const down = socketError('ECONNREFUSED', 'refused');
    await expect(retryTransient(async () => { calls++; throw down; }, { timeoutMs: 3500, ...clock() })).rejects.toBe(down);
    expect(calls).toBe(4);
  });
});
