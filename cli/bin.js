#!/usr/bin/env node
// The `kubeloop` command: checks the Node.js version first, then runs the compiled CLI when built (images),
// otherwise the TypeScript source via tsx.
// Nothing is imported before the check: an older Node fails inside kubeloop's dependencies (undici) instead
// of saying what to do, so only globals are used until the version is known to be good.
const REQUIRED_NODE_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= REQUIRED_NODE_MAJOR)) {
  process.stderr.write(
    `kubeloop needs Node.js ${REQUIRED_NODE_MAJOR} or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      `Get Node.js ${REQUIRED_NODE_MAJOR} from the npm registry and put it first on PATH, then run the command again:\n` +
      `  npm install --prefix ~/.node${REQUIRED_NODE_MAJOR} node@${REQUIRED_NODE_MAJOR} && export PATH=~/.node${REQUIRED_NODE_MAJOR}/node_modules/.bin:$PATH\n` +
      `(or nvm install ${REQUIRED_NODE_MAJOR}, or your system's Node.js ${REQUIRED_NODE_MAJOR} package). In a project made by \`kubeloop init\`,\n` +
      `\`npm install\` adds node@${REQUIRED_NODE_MAJOR} to node_modules/.bin, which npm scripts and npx put first on PATH.\n`,
  );
  process.exit(2);
}

// Built-ins through getBuiltinModule, not import(): an ES import reads every export, and node:fs's `promises` and
// streams getters would load fs/promises, readline and the REPL's history into every process (~1.3 MiB of RSS).
const module = process.getBuiltinModule('node:module');
const { existsSync } = process.getBuiltinModule('node:fs');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
// Images ship V8's code cache of dist/ and its dependencies (cli/warm-compile-cache.js): used when present, it
// saves the compiling of every module at start-up. A module it lacks is compiled as usual.
const compileCache = fileURLToPath(new URL('../.compile-cache', import.meta.url));
if (existsSync(compiled) && existsSync(compileCache) && !process.env.KUBELOOP_FROM_SOURCE) module.enableCompileCache(compileCache);
// The long-running entrypoints bundled by the build (cli/bundle-entrypoints.js): one module and a few chunks to
// load instead of ~900 files. KUBELOOP_NO_BUNDLE=1 runs them from dist/cli like every other command.
const command = process.argv[2] ?? '';
const bundled = ['router', 'webhook', 'function'].includes(command) ? fileURLToPath(new URL(`../dist/bundle/${command}.mjs`, import.meta.url)) : '';
if (bundled && existsSync(bundled) && !process.env.KUBELOOP_FROM_SOURCE && !process.env.KUBELOOP_NO_BUNDLE) {
  const { main } = await import(pathToFileURL(bundled).href);
  process.exitCode = await main(process.argv.slice(3));
} else if (existsSync(compiled) && !process.env.KUBELOOP_FROM_SOURCE) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
