#!/usr/bin/env node
// The `kubeloop` command: runs the compiled CLI when built (images), otherwise the TypeScript source via tsx.
import module from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (existsSync(compiled) && !process.env.KUBELOOP_FROM_SOURCE) {
  // Images ship V8's code cache of dist/ and its dependencies (cli/warm-compile-cache.js): used when present, it
  // saves the compiling of every module at start-up. A module it lacks is compiled as usual.
  const compileCache = fileURLToPath(new URL('../.compile-cache', import.meta.url));
  if (existsSync(compileCache)) module.enableCompileCache(compileCache);
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
