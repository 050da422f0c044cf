// The function client's pool per origin follows the fair scheduler's cap, so it never queues what the cap admitted.
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_CALLS_IN_FLIGHT, functionConnections } from './fairness.ts';

describe('functionConnections', () => {
  it('holds as many connections per origin as the cap admits calls, by default and when raised', () => {
    expect(functionConnections(undefined)).toBe(DEFAULT_MAX_CALLS_IN_FLIGHT);
    expect(functionConnections({ maxCallsInFlight: 1000 })).toBe(1000);
  });

  it("keeps the client's default under a smaller cap, with the cap off and with fairness off", () => {
    expect(functionConnections({ maxCallsInFlight: 10 })).toBeUndefined();
    expect(functionConnections({ maxCallsInFlight: 0 })).toBeUndefined();
    expect(functionConnections(false)).toBeUndefined();
  });
});
