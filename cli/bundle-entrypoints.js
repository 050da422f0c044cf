#!/usr/bin/env node
// Build step (npm run build, the Dockerfile): bundles the long-running entrypoints (router, webhook, function) with
// their dependencies into dist/bundle/<command>.mjs, so a start reads a few files instead of ~900, and the router
// into dist/bundle/router-snapshot.cjs, the script of its V8 startup snapshot (cli/build-snapshot.js; docs/performance.md).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productionBundleOptions, productionPlugins } from './bundle-options.js';
import { routerSnapshotEntry, snapshotBundleOptions } from './snapshot-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// The dist/ folder to write into (test/support/production-bundle.ts builds elsewhere); the sources are this checkout's.
const outdir = join(process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist'), 'bundle');
/** The commands cli/bin.js starts from a bundle; every other command runs from dist/cli as before. */
const COMMANDS = ['router', 'webhook', 'function'];

rmSync(outdir, { recursive: true, force: true });
await build({
  // One tiny entry per command: the command module loaded statically; cli/bin.js calls its main with runCli's exit codes.
  entryPoints: COMMANDS.map((name) => ({ in: `bundle-entry:${name}`, out: name })),
  plugins: [
    {
      name: 'entries',
      setup(b) {
        b.onResolve({ filter: /^bundle-entry:/ }, (args) => ({ path: args.path.slice('bundle-entry:'.length), namespace: 'bundle-entry' }));
        b.onLoad({ filter: /.*/, namespace: 'bundle-entry' }, (args) => ({
          resolveDir: join(root, 'cli'),
          loader: 'ts',
          contents: `import { runLoadedCommand } from './run-cli.ts';\nimport * as command from './commands/${args.path}.ts';\nexport const main = (argv) => runLoadedCommand(${JSON.stringify(args.path)}, command, argv);\n`,
        }));
      },
    },
    ...productionPlugins,
  ],
  ...productionBundleOptions(outdir),
});
// One CommonJS script for the router's startup snapshot: `node --build-snapshot` takes nothing else.
await build({ stdin: routerSnapshotEntry(), ...snapshotBundleOptions(join(outdir, 'router-snapshot.cjs')) });
console.log(`bundle-entrypoints: ${COMMANDS.join(', ')} and the router's snapshot script in ${outdir}`);
