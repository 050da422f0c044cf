import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTER_DEFAULTS, ROUTER_FLAG_OPTIONS, ROUTER_RANGES, ROUTER_SWITCHES, ROUTER_USAGE, type RangeSetting, type SwitchSetting } from './router-flags.ts';

/** Every default the router's tables hold, by flag. */
const TABLE_DEFAULTS: Array<[string, string]> = [...Object.entries(ROUTER_RANGES).map(([f, e]: [string, RangeSetting]) => [f, String(e.default)] as [string, string]), ...Object.entries(ROUTER_SWITCHES).map(([f, e]: [string, SwitchSetting]) => [f, String(e.default)] as [string, string]), ...Object.entries(ROUTER_DEFAULTS).map(([f, v]) => [f, String(v)] as [string, string])];

/** ROUTER_USAGE as written in the source: a default there is either `${...}` from a table or written by hand. */
const usageSource = /export const ROUTER_USAGE = `([\s\S]*?)`;/.exec(readFileSync(new URL('./router-flags.ts', import.meta.url), 'utf8'))?.[1] ?? '';

describe('the router flag table', () => {
  it('gives every numeric setting a flag, a default inside its range, and its variable in the usage', () => {
    for (const [flag, entry] of Object.entries(ROUTER_RANGES) as Array<[string, RangeSetting]>) {
      expect(ROUTER_FLAG_OPTIONS, flag).toHaveProperty([flag]);
      expect(entry.default, flag).toBeGreaterThanOrEqual(entry.min);
      expect(entry.default, flag).toBeLessThanOrEqual(entry.max);
      if (entry.env) expect(ROUTER_USAGE, flag).toContain(entry.env);
    }
  });

  it('gives every true/false setting a flag taking a value and its variable in the usage', () => {
    for (const [flag, entry] of Object.entries(ROUTER_SWITCHES) as Array<[string, SwitchSetting]>) {
      expect(ROUTER_FLAG_OPTIONS, flag).toHaveProperty([flag, 'type'], 'string');
      expect(ROUTER_USAGE, flag).toContain(entry.env);
    }
  });

  it("shows each flag's default once, in the flag's own line, taken from the table", () => {
    for (const [flag, value] of TABLE_DEFAULTS) {
      const shown = [...ROUTER_USAGE.matchAll(new RegExp(`--${flag}[ =](\\S+)`, 'g'))].map((m) => m[1]);
      expect(shown, `--${flag} in the usage`).toEqual([value]);
      // The source writes it `--flag ${...}` (or the shared usage it includes does), never the value itself.
      expect(usageSource, `--${flag} written by hand`).not.toMatch(new RegExp(`--${flag}[ =][^$\\s]`));
    }
  });

  it('writes no default by hand: every `--flag value` in the usage source is a table lookup or a placeholder', () => {
    // An option starts a line or follows another's value (`--qps ${...} --burst ${...}`); prose mentions flags too.
    const literal = [...usageSource.matchAll(/(?:^ {2}|\} )--([a-z0-9-]+)[ =]([^$\s[]\S*)/gm)].filter(([, , value]) => !/^[A-Z]|=|,|^127\.0\.0\.1$/.test(value ?? ''));
    expect(literal.map(([text]) => text)).toEqual([]);
  });

  it('takes a default for every flag shown with one from the tables', () => {
    for (const flag of Object.keys(ROUTER_DEFAULTS)) expect(ROUTER_FLAG_OPTIONS, flag).toHaveProperty([flag]);
  });
});
