// The `kubeloop` command: dispatches to one module per subcommand under cli/commands/.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const COMMANDS: Record<string, string> = {
  init: 'create a function project (code, test, fixture, Dockerfile, Loop, chart values)',
  function: 'serve one reconcile function (built-in name or module) over HTTP',
  replay: 'POST recorded requests at a function and compare the replies (--update re-records)',
  render: 'show the actions of a function for objects in files, and the objects after them',
  router: 'run the event router',
  webhook: 'run the admission webhook',
  certs: 'generate, inject, rotate or show webhook certificates',
  cluster: 'build, start, stop or inspect the local control plane',
  dev: 'run the whole platform on an embedded local cluster',
};

export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}`);
  return `usage: kubeloop <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun "kubeloop <command> --help" for its options.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  if (!(name in COMMANDS)) {
    console.error(`kubeloop: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  // Same extension as this file: .ts from source (tsx), .js when compiled.
  const ext = extname(fileURLToPath(import.meta.url));
  const module = (await import(new URL(`./commands/${name}${ext}`, import.meta.url).href)) as CommandModule;
  return module.run(rest);
}

process.exitCode = await main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`kubeloop: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
