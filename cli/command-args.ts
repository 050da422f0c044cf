// parseArgs for the commands that print their usage: a parse error is a usage error (exit 2), --help prints
// the usage (exit 0); either way the command returns that exit code instead of going on.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export type ParsedCommand<T extends Options> =
  | { exitCode: number }
  | { exitCode?: undefined; values: ReturnType<typeof parseArgs<{ options: T & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: true }>>['values']; positionals: string[] };

export function parseCommandArgs<T extends Options>(command: string, argv: string[], options: T, usage: string): ParsedCommand<T> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } as const } });
  } catch (error) {
    console.error(`kubeloop ${command}: ${(error as Error).message}\n\n${usage}`);
    return { exitCode: 2 };
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return { exitCode: 0 };
  }
  return { values: parsed.values, positionals: parsed.positionals };
}
