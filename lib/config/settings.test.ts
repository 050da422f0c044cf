// The shared setting readers: which source wins, and errors that name the flag or variable.
import { describe, expect, it } from 'vitest';
import { pickSetting, settingBoolean, settingInteger, settingNumber, settingOneOf } from './settings.ts';

describe('pickSetting', () => {
  it('prefers the flag, then the first non-empty variable, else nothing', () => {
    const env = { A: '', B: 'b', C: 'c' };
    expect(pickSetting({ x: 'f' }, env, 'x', 'B')).toEqual({ value: 'f', setting: '--x' });
    expect(pickSetting({ x: '' }, env, 'x', 'B')).toEqual({ value: '', setting: '--x' });
    expect(pickSetting({}, env, 'x', 'A', 'B', 'C')).toEqual({ value: 'b', setting: 'B' });
    expect(pickSetting({ x: true }, env, 'x', 'A')).toBeUndefined();
  });
});

describe('setting parsers', () => {
  it('return the fallback when nothing set the value', () => {
    expect(settingInteger(undefined, 7, 0, 10)).toBe(7);
    expect(settingNumber(undefined, 1.5, 0, 10)).toBe(1.5);
    expect(settingOneOf(undefined, 'a', ['a', 'b'] as const)).toBe('a');
    expect(settingBoolean(undefined, true)).toBe(true);
  });

  it('parse good values', () => {
    expect(settingInteger({ value: '10', setting: '--n' }, 0, 0, 10)).toBe(10);
    expect(settingNumber({ value: '0.5', setting: '--n' }, 0, 0, 10)).toBe(0.5);
    expect(settingOneOf({ value: 'b', setting: '--m' }, 'a', ['a', 'b'] as const)).toBe('b');
    expect(settingBoolean({ value: 'YES', setting: 'B' }, false)).toBe(true);
    expect(settingBoolean({ value: '0', setting: 'B' }, true)).toBe(false);
  });

  it('name the setting and the bad value', () => {
    expect(() => settingInteger({ value: '1.5', setting: '--n' }, 0, 0, 10)).toThrow('--n: "1.5" is not an integer between 0 and 10');
    expect(() => settingInteger({ value: '11', setting: 'N' }, 0, 0, 10)).toThrow('N: "11" is not an integer between 0 and 10');
    expect(() => settingNumber({ value: 'x', setting: '--q' }, 0, 0, 10)).toThrow('--q: "x" is not a number between 0 and 10');
    expect(() => settingOneOf({ value: 'c', setting: 'M' }, 'a', ['a', 'b'] as const)).toThrow('M: "c" is not one of a, b');
    expect(() => settingBoolean({ value: 'maybe', setting: 'B' }, false)).toThrow('B: "maybe" is not true or false');
  });
});
