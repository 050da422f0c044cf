// Start-up settings of every deployable: a flag wins over environment variables, and a bad value is
// reported with the flag or variable that set it ("--port: "x" is not an integer between 0 and 65535").

/** A raw value and the name of what set it (`--flag` or the environment variable). */
export interface Setting {
  value: string;
  setting: string;
}

/** parseArgs' values object. */
export type FlagValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/** The `--flag` value when given (even empty), else the first of `variables` that is set and not empty. */
/**
 * A bad setting found after the flags were read (a kubeconfig that is missing or names no such context):
 * the command line's mistake, so the `kubeloop` command exits 2 for it, as for a bad flag.
 */
export class SettingError extends Error {
  override name = 'SettingError';
  readonly code = 'ERR_KUBELOOP_SETTING';
}

export function pickSetting(values: FlagValues, env: NodeJS.ProcessEnv, flag: string, ...variables: string[]): Setting | undefined {
  const fromFlag = values[flag];
  if (typeof fromFlag === 'string') return { value: fromFlag, setting: `--${flag}` };
  for (const variable of variables) {
    const fromEnv = env[variable];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, setting: variable };
  }
  return undefined;
}

function settingInRange(picked: Setting | undefined, fallback: number, min: number, max: number, integer: boolean): number {
  if (!picked) return fallback;
  const parsed = Number(picked.value);
  if (!Number.isFinite(parsed) || (integer && !Number.isInteger(parsed)) || parsed < min || parsed > max) {
    throw new Error(`${picked.setting}: "${picked.value}" is not ${integer ? 'an integer' : 'a number'} between ${min} and ${max}`);
  }
  return parsed;
}

/** An integer in [min, max], or `fallback` when nothing set it. */
export function settingInteger(picked: Setting | undefined, fallback: number, min: number, max: number): number {
  return settingInRange(picked, fallback, min, max, true);
}

/** A finite number (fractions allowed) in [min, max], or `fallback` when nothing set it. */
export function settingNumber(picked: Setting | undefined, fallback: number, min: number, max: number): number {
  return settingInRange(picked, fallback, min, max, false);
}

/** One of `allowed` (exact spelling), or `fallback` when nothing set it. */
export function settingOneOf<T extends string>(picked: Setting | undefined, fallback: T, allowed: readonly T[]): T {
  if (!picked) return fallback;
  if ((allowed as readonly string[]).includes(picked.value)) return picked.value as T;
  throw new Error(`${picked.setting}: "${picked.value}" is not one of ${allowed.join(', ')}`);
}

/** true/1/yes or false/0/no (any case), or `fallback` when nothing set it. */
export function settingBoolean(picked: Setting | undefined, fallback: boolean): boolean {
  if (!picked) return fallback;
  const value = picked.value.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no', ''].includes(value)) return false;
  throw new Error(`${picked.setting}: "${picked.value}" is not true or false`);
}
