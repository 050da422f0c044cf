// parseArgs for the commands that print their usage: a parse error is a usage error (exit 2), --help prints
// the usage (exit 0); either way the command returns that exit code instead of going on. Every command
// exits 2 on a usage error and 1 on a runtime failure (cli/main.ts maps what is thrown).
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A mistake in how the command was called (flags, arguments, settings): exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** True for a UsageError, a bad setting found later (lib's SettingError) and node:util parseArgs' own errors. */
export function isUsageError(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('ERR_PARSE_ARGS_') || code === 'ERR_KUBELOOP_SETTING');
}

/** Prints "kubeloop <command>: <message>" (and the usage, when given) and returns exit code 2. */
export function usageFailure(command: string, error: unknown, usage?: string): number {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`kubeloop ${command}: ${message}${usage && !message.includes(usage) ? `\n\n${usage}` : ''}`);
  return 2;
}

export type ParsedCommand<T extends Options> =
  | { exitCode: number }
  | { exitCode?: undefined; values: ReturnType<typeof parseArgs<{ options: T & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: true }>>['values']; positionals: string[] };

export function parseCommandArgs<T extends Options>(command: string, argv: string[], options: T, usage: string): ParsedCommand<T> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } as const } });
  } catch (error) {
    return { exitCode: usageFailure(command, error, usage) };
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return { exitCode: 0 };
  }
  return { values: parsed.values, positionals: parsed.positionals };
}
