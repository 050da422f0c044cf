import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectOptionsFor, connectStep, opensAhead, originKey, type Ahead } from './preconnector.ts';

const kept: Ahead = { state: 'open', socket: {} as Socket, release: () => {} };

describe('the decisions of a connection opened ahead', () => {
  it('names an origin as undici does, whether its port is written or the default', () => {
    expect(originKey({ protocol: 'https:', hostname: 'fn.n.svc', port: '' })).toBe('https://fn.n.svc:443');
    expect(originKey({ protocol: 'https:', hostname: 'fn.n.svc', port: '443' })).toBe('https://fn.n.svc:443');
    expect(originKey({ protocol: 'http:', hostname: '127.0.0.1', port: '' })).toBe('http://127.0.0.1:80');
    expect(originKey({ protocol: 'http:', hostname: '127.0.0.1', port: '8080' })).not.toBe(originKey({ protocol: 'https:', hostname: '127.0.0.1', port: '8080' }));
    // The options it connects with are those undici's Client passes for the URL's origin: the same key.
    expect(originKey(connectOptionsFor(new URL('https://[::1]/reconcile')))).toBe('https://::1:443');
    expect(connectOptionsFor(new URL('http://fn.n.svc:8080/x?y'))).toEqual({ protocol: 'http:', hostname: 'fn.n.svc', host: 'fn.n.svc:8080', port: '8080' });
  });

  it("gives the Agent's first connect the kept socket, or the one still opening; every other connect opens its own", () => {
    expect(connectStep(kept)).toBe('take');
    expect(connectStep({ state: 'opening' })).toBe('join');
    // Only one connect waits for it: the others open their own connections, as without it.
    expect(connectStep({ state: 'opening', taker: { options: { protocol: 'http:', hostname: 'h', port: '' }, callback: () => {} } })).toBe('connect');
    expect(connectStep(undefined)).toBe('connect');
  });

  it('opens at most one per origin, none while the Agent has a connection there, none once closed', () => {
    expect(opensAhead(undefined, 0, false)).toBe(true);
    expect(opensAhead(kept, 0, false)).toBe(false);
    expect(opensAhead({ state: 'opening' }, 0, false)).toBe(false);
    expect(opensAhead(undefined, 1, false)).toBe(false);
    expect(opensAhead(undefined, 0, true)).toBe(false);
  });
});
