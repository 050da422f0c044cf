import { describe, expect, it } from 'vitest';
import { decideCaller, requestHeaderConfig, type RequestHeaderConfig } from './front-proxy.ts';

const config: RequestHeaderConfig = {
  caPem: 'PEM',
  allowedNames: ['front-proxy-client'],
  usernameHeaders: ['X-Remote-User'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};
const proxy = { authorized: true, commonName: 'front-proxy-client' };

describe('requestHeaderConfig', () => {
  it('reads the API server published settings, JSON lists included', () => {
    expect(
      requestHeaderConfig({
        'requestheader-client-ca-file': 'PEM',
        'requestheader-allowed-names': '["front-proxy-client"]',
        'requestheader-username-headers': '["X-Remote-User"]',
        'requestheader-group-headers': '["X-Remote-Group"]',
        'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      }),
    ).toEqual(config);
  });

  it('is undefined when the API server runs without the aggregation layer', () => {
    expect(requestHeaderConfig({ 'client-ca-file': 'PEM' })).toBeUndefined();
    expect(requestHeaderConfig(undefined)).toBeUndefined();
  });

  it('refuses a list that is not a JSON list of strings', () => {
    expect(() => requestHeaderConfig({ 'requestheader-client-ca-file': 'PEM', 'requestheader-allowed-names': 'front-proxy-client' })).toThrow();
  });
});

describe('decideCaller', () => {
  it('takes the user, groups and extra from the front proxy headers', () => {
    const decision = decideCaller(proxy, { 'x-remote-user': 'alice', 'x-remote-group': ['dev', 'system:authenticated'], 'x-remote-extra-scopes%2Fa': 'x' }, config);
    expect(decision).toEqual({ ok: true, user: { user: 'alice', groups: ['dev', 'system:authenticated'], extra: { 'scopes/a': ['x'] } } });
  });

  it('names no user for the API server own calls (discovery, availability)', () => {
    expect(decideCaller(proxy, {}, config)).toEqual({ ok: true, user: undefined });
  });

  it('refuses headers sent without the front proxy certificate: they are a claim, not an identity', () => {
    const decision = decideCaller({ authorized: false, commonName: 'admin' }, { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' }, config);
    expect(decision).toMatchObject({ ok: false, code: 401 });
    expect(decideCaller({ authorized: false, commonName: undefined }, {}, config)).toMatchObject({ ok: false, code: 401 });
  });

  it('refuses a certificate of the requestheader CA with a name not allowed', () => {
    expect(decideCaller({ authorized: true, commonName: 'someone-else' }, { 'x-remote-user': 'alice' }, config)).toMatchObject({ ok: false, code: 403 });
  });

  it('accepts any name the CA signed when no names are configured', () => {
    expect(decideCaller({ authorized: true, commonName: 'any' }, { 'x-remote-user': 'alice' }, { ...config, allowedNames: [] })).toMatchObject({ ok: true, user: { user: 'alice' } });
  });
});
