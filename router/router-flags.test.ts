import { describe, expect, it } from 'vitest';
import { ROUTER_FLAG_OPTIONS, ROUTER_RANGES, ROUTER_SWITCHES, ROUTER_USAGE, type RangeSetting, type SwitchSetting } from './router-flags.ts';

describe('the router flag table', () => {
  it('gives every numeric setting a flag, a default inside its range, and a line of the usage showing that default', () => {
    for (const [flag, entry] of Object.entries(ROUTER_RANGES) as Array<[string, RangeSetting]>) {
      expect(ROUTER_FLAG_OPTIONS, flag).toHaveProperty([flag]);
      expect(entry.default, flag).toBeGreaterThanOrEqual(entry.min);
      expect(entry.default, flag).toBeLessThanOrEqual(entry.max);
      expect(ROUTER_USAGE, flag).toContain(`--${flag} ${entry.default}`);
      if (entry.env) expect(ROUTER_USAGE, flag).toContain(entry.env);
    }
  });

  it('gives every true/false setting a flag taking a value, its variable, and a line of the usage showing its default', () => {
    for (const [flag, entry] of Object.entries(ROUTER_SWITCHES) as Array<[string, SwitchSetting]>) {
      expect(ROUTER_FLAG_OPTIONS, flag).toHaveProperty([flag, 'type'], 'string');
      expect(ROUTER_USAGE, flag).toContain(`--${flag}=${entry.default}`);
      expect(ROUTER_USAGE, flag).toContain(entry.env);
    }
  });
});
