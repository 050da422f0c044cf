#!/usr/bin/env node
// Build step (npm run build, the Dockerfile): bundles the long-running entrypoints (router, webhook, function) with
// their dependencies into dist/bundle/<command>.mjs, so a start reads a few files instead of ~900 (docs/performance.md).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
// The dist/ folder to write into (test/e2e/production-bundle.ts builds elsewhere); the sources are this checkout's.
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
    {
      // An ES import of node:http (or https) makes Node read every export of it, and node:http's lazy WebSocket,
      // CloseEvent and MessageEvent getters load Node's internal undici: ~50 ms of CPU at start-up for nothing.
      // Imported statements get the module through require instead, with the same named exports minus those.
      name: 'http-through-require',
      setup(b) {
        b.onResolve({ filter: /^(node:)?https?$/ }, (args) =>
          args.kind === 'import-statement' || args.kind === 'dynamic-import' ? { path: args.path.replace(/^node:/, ''), namespace: 'builtin-require' } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => {
          const exported = Object.entries(Object.getOwnPropertyDescriptors(require(args.path))).filter(([, d]) => !d.get).map(([name]) => name);
          return {
            loader: 'js',
            contents: `import { createRequire } from 'node:module';\nconst m = createRequire(import.meta.url)('node:${args.path}');\nexport default m;\nexport const { ${exported.join(', ')} } = m;\n`,
          };
        });
      },
    },
  ],
  bundle: true,
  // Lazily imported modules (each function, the tracing SDK) become chunks loaded only when used.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  // client-node is loaded only for exec/auth-provider kubeconfigs (and is the costliest import): left to
  // node_modules, as is tsx (user functions in TypeScript).
  external: ['@kubernetes/client-node', 'tsx', 'tsx/*'],
  // CommonJS dependencies (fastify, pino, prom-client) call require() for Node's built-ins.
  banner: { js: "import { createRequire as __kubeloopCreateRequire } from 'node:module';\nconst require = __kubeloopCreateRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
console.log(`bundle-entrypoints: ${COMMANDS.join(', ')} in ${outdir}`);
