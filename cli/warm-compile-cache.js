#!/usr/bin/env node
// Image build step (Dockerfile, test/support/production-bundle.ts): fills .compile-cache with V8's code cache for the
// modules the images' entrypoints load, so a container compiles none of them when it starts (docs/performance.md).
import module from 'node:module';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
if (!existsSync(join(dist, 'cli', 'main.js'))) {
  console.error(`warm-compile-cache: no compiled CLI at ${dist}; run npm run build first`);
  process.exit(1);
}
const { status, message, directory } = module.enableCompileCache(join(root, '.compile-cache'));
if (status === module.constants.compileCacheStatus.FAILED || status === module.constants.compileCacheStatus.DISABLED) {
  console.error(`warm-compile-cache: Node could not enable its compile cache: ${message ?? 'disabled'}`);
  process.exit(1);
}

// V8 keys its code cache by the flags that shape compiled code, and the function images run node with their own
// (cli/node-flags.ts): a cache filled without them would be refused, and each container would compile (and try to
// write) it all. So a second pass under those flags fills the function bundle's share of the cache for them.
const FUNCTIONS_PASS = 'KUBELOOP_WARM_FUNCTION_FLAGS';
const functionsPass = process.env[FUNCTIONS_PASS] === '1';

/** The .js and .mjs files directly in dir (depth 1: index.js of each function folder is given as a path). */
async function filesIn(dir, name = (file) => file) {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.map((entry) => join(dir, name(entry.name))).filter((file) => /\.m?js$/.test(file) && existsSync(file));
}

// What the entrypoints load: the bundles, every subcommand module (cli/run-cli.js imports them on demand), every function
// (functions/registry.js imports them on demand) and client-node (loaded only for exec/auth-provider
// kubeconfigs, the costliest import of all). Loading a module runs only its top level, as the command would.
const entries = functionsPass
  ? [join(dist, 'bundle', 'function.mjs'), ...(await filesIn(join(dist, 'bundle', 'chunks')))]
  : [
      // The bundled entrypoints (cli/bundle-entrypoints.js) and their chunks, lazily loaded ones included: loading one
      // only defines its main, it does not run the command.
      ...(await filesIn(join(dist, 'bundle'))),
      ...(await filesIn(join(dist, 'bundle', 'chunks'))),
      ...(await filesIn(join(dist, 'cli', 'commands'))),
      ...(await filesIn(join(dist, 'functions'), (folder) => join(folder, 'index.js'))),
      '@kubernetes/client-node',
    ];
let loaded = 0;
const unloadable = [];
for (const entry of entries) {
  try {
    await import(entry.startsWith('/') ? pathToFileURL(entry).href : entry);
    loaded++;
  } catch (error) {
    // Commands that need the repository (kubeloop dev reads charts/ and samples/) cannot load in an image.
    unloadable.push(`${entry.startsWith(root) ? entry.slice(root.length) : entry}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}
if (functionsPass) {
  module.flushCompileCache();
  console.log(`warm-compile-cache: ${loaded} function bundle modules and what they import, for node ${process.execArgv.join(' ')}`);
  if (unloadable.length > 0) console.log(`not loadable here, so compiled when used:\n  ${unloadable.join('\n  ')}`);
  process.exit(0);
}
// fastify loads its schema and serialiser compilers (ajv and ~100 more modules) when a server gets ready, not
// when it is imported: build and ready one server as every entrypoint does.
const { createServer } = await import(pathToFileURL(join(dist, 'lib', 'server', 'create-server.js')).href);
const { createLogger } = await import(pathToFileURL(join(dist, 'lib', 'observability', 'logger.js')).href);
const server = createServer({ logger: createLogger({ name: 'warm-compile-cache', level: 'silent' }) });
await server.app.ready();
await server.app.close();
// cli/main.js runs the command line when loaded: give it one that only prints the usage.
process.argv = [process.argv[0], join(root, 'cli', 'bin.js'), '--help'];
await import(pathToFileURL(join(dist, 'cli', 'main.js')).href);
process.exitCode = 0;
module.flushCompileCache();
console.log(`warm-compile-cache: ${loaded + 1} entry modules and what they import, cached in ${directory}`);
if (unloadable.length > 0) console.log(`not loadable here, so compiled when used:\n  ${unloadable.join('\n  ')}`);
const { FUNCTION_NODE_FLAGS } = await import(pathToFileURL(join(dist, 'cli', 'node-flags.js')).href);
if (FUNCTION_NODE_FLAGS.length > 0) {
  execFileSync(process.execPath, [...FUNCTION_NODE_FLAGS, fileURLToPath(import.meta.url)], { stdio: 'inherit', env: { ...process.env, [FUNCTIONS_PASS]: '1' } });
}
