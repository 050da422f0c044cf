import { describe, expect, it } from 'vitest';
import { checkRequest, isLoopbackAddress, ownHosts } from './request-guard.ts';

const hosts = ownHosts('127.0.0.1', 7777);

describe('checkRequest', () => {
  it('lets the console page and a plain client (no Origin) through on any loopback name', () => {
    expect(checkRequest({ host: '127.0.0.1:7777', origin: 'http://127.0.0.1:7777' }, hosts)).toEqual({ ok: true });
    expect(checkRequest({ host: 'localhost:7777', 'sec-fetch-site': 'same-origin' }, hosts)).toEqual({ ok: true });
    expect(checkRequest({ host: '[::1]:7777' }, hosts)).toEqual({ ok: true });
  });

  it('refuses another site reading through the console', () => {
    expect(checkRequest({ host: '127.0.0.1:7777', origin: 'https://evil.example' }, hosts)).toMatchObject({ ok: false, reason: expect.stringContaining('cross-site') });
    expect(checkRequest({ host: '127.0.0.1:7777', origin: 'http://127.0.0.1:8080' }, hosts)).toMatchObject({ ok: false });
    expect(checkRequest({ host: '127.0.0.1:7777', origin: 'null' }, hosts)).toMatchObject({ ok: false });
    expect(checkRequest({ host: '127.0.0.1:7777', 'sec-fetch-site': 'cross-site' }, hosts)).toMatchObject({ ok: false });
  });

  it('refuses a request that reached it under another name (DNS rebinding)', () => {
    expect(checkRequest({ host: 'evil.example:7777', origin: 'http://evil.example:7777' }, hosts)).toMatchObject({ ok: false, reason: expect.stringContaining('DNS rebinding') });
    expect(checkRequest({ host: '127.0.0.1:7778' }, hosts)).toMatchObject({ ok: false });
    expect(checkRequest({}, hosts)).toMatchObject({ ok: false });
  });

  it('accepts only the bind address itself when not on loopback', () => {
    const lan = ownHosts('10.0.0.5', 7777);
    expect(checkRequest({ host: '10.0.0.5:7777' }, lan)).toEqual({ ok: true });
    expect(checkRequest({ host: 'localhost:7777' }, lan)).toMatchObject({ ok: false });
  });
});

describe('isLoopbackAddress', () => {
  it('knows loopback from the rest', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost'].map(isLoopbackAddress)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '10.0.0.5', '::'].map(isLoopbackAddress)).toEqual([false, false, false]);
  });
});
