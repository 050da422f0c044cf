// The `kubeloop` command: runCli dispatches to one module per subcommand under cli/commands/. Exit codes:
// 0 done, 1 a runtime failure, 2 a usage error (unknown command, bad flag or setting), whatever the command.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isUsageError } from './command-args.ts';
import { COMMANDS } from './command-list.ts';
import { ownPackageJson } from './package-root.ts';

export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}`);
  return `usage: kubeloop <command> [options]\n       kubeloop --version\n\ncommands:\n${lines.join('\n')}\n\nRun "kubeloop <command> --help" for its options. Exit codes: 0 ok, 1 failure, 2 usage error.`;
}

function version(): string {
  return ownPackageJson().version;
}

async function dispatch(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    console.log(`kubeloop ${version()}`);
    return 0;
  }
  if (!name) {
    console.error(usage());
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return 0;
  }
  if (!(name in COMMANDS)) {
    console.error(`kubeloop: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  // Same extension as this file: .ts from source (tsx), .js when compiled.
  const ext = extname(fileURLToPath(import.meta.url));
  const module = (await import(new URL(`./commands/${name}${ext}`, import.meta.url).href)) as CommandModule;
  return runCommand(name, module, rest);
}

async function runCommand(name: string, module: CommandModule, argv: string[]): Promise<number> {
  try {
    return await module.run(argv);
  } catch (error) {
    if (!isUsageError(error)) throw error;
    console.error(`kubeloop ${name}: ${(error as Error).message}`);
    return 2;
  }
}

/** Runs one command already loaded (the bundled entrypoints, cli/bundle-entrypoints.js): the same exit codes as runCli. */
export function runLoadedCommand(name: string, module: CommandModule, argv: string[]): Promise<number> {
  return runCommand(name, module, argv).catch(failed);
}

/** Runs one kubeloop command line and returns its exit code; long-running commands resolve only when they stop. */
export function runCli(argv: string[]): Promise<number> {
  return dispatch(argv).catch(failed);
}

/** A command that failed at run time: its message, exit code 1. */
function failed(error: unknown): number {
  console.error(`kubeloop: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
}
