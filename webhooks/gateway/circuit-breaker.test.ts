// The circuit breaker's states with a hand-moved clock: closed, open after N failures, half-open probe, closed again.
import { describe, expect, it } from 'vitest';
import { CircuitBreakers } from './circuit-breaker.ts';

function breakers() {
  let now = 0;
  const b = new CircuitBreakers({ threshold: 3, coolDownMs: 10_000, now: () => now });
  return { b, advance: (ms: number) => (now += ms) };
}

describe('CircuitBreakers', () => {
  it('opens after the threshold of consecutive failures, not before; a success resets the count', () => {
    const { b } = breakers();
    expect(b.record('h', true)).toBeUndefined();
    expect(b.record('h', true)).toBeUndefined();
    expect(b.record('h', false)).toBeUndefined();
    expect(b.record('h', true)).toBeUndefined();
    expect(b.record('h', true)).toBeUndefined();
    expect(b.state('h')).toBe('closed');
    expect(b.record('h', true)).toBe('open');
    expect(b.state('h')).toBe('open');
    expect(b.admit('h')).toEqual({ call: false, retryInMs: 10_000 });
    expect(b.admit('other')).toEqual({ call: true, probe: false });
  });

  it('lets one probe through after the cool-down; its success closes, its failure opens for another cool-down', () => {
    const { b, advance } = breakers();
    for (let i = 0; i < 3; i++) b.record('h', true);
    advance(9_999);
    expect(b.admit('h').call).toBe(false);
    advance(1);
    expect(b.state('h')).toBe('half-open');
    expect(b.admit('h')).toEqual({ call: true, probe: true });
    expect(b.admit('h').call).toBe(false);
    expect(b.record('h', true)).toBe('open');
    expect(b.admit('h')).toEqual({ call: false, retryInMs: 10_000 });
    advance(10_000);
    expect(b.admit('h')).toEqual({ call: true, probe: true });
    expect(b.record('h', false)).toBe('closed');
    expect(b.state('h')).toBe('closed');
    expect(b.openCount()).toBe(0);
  });

  it('lets another probe through when one never reported', () => {
    const { b, advance } = breakers();
    for (let i = 0; i < 3; i++) b.record('h', true);
    advance(10_000);
    expect(b.admit('h').call).toBe(true);
    advance(9_000);
    expect(b.admit('h').call).toBe(false);
    advance(1_000);
    expect(b.admit('h').call).toBe(true);
  });

  it('forgets a hook', () => {
    const { b } = breakers();
    for (let i = 0; i < 3; i++) b.record('h', true);
    b.forget('h');
    expect(b.state('h')).toBe('closed');
  });
});
