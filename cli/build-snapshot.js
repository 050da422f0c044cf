#!/usr/bin/env node
// Build step (npm run build; the router image's, with the image's own Node): makes the router's V8 startup snapshot,
// dist/bundle/router.blob, from dist/bundle/router-snapshot.cjs, and router.blob.json naming the Node that made it.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Node's arguments that make `blob` from the snapshot script `script`, after writing the build's configuration
 * beside the script (the last argument). Without code cache: Node keeps the blob's data in memory for the process's life, and one
 * with code cache holds the bytecode of every function run while building and a code cache of every Node
 * built-in, which left the router's peak RSS with 2,000 pods ~20 MiB above the bundle's; functions compile on
 * first use instead, as from the bundle (docs/performance.md, "The router starts from a V8 startup snapshot").
 */
export function snapshotBuildArgs(script, blob) {
  const config = `${script.replace(/\.cjs$/, '')}.config.json`;
  writeFileSync(config, `${JSON.stringify({ builder: script, withoutCodeCache: true })}\n`);
  return ['--snapshot-blob', blob, '--build-snapshot-config', config];
}

/** Node's output without its warnings about built-ins in snapshots, each line cut short (the script is minified). */
function readable(output) {
  const warning = /fully verified whether built-in module|^It may still work|^To request support|^\(Use `node --trace-warnings/;
  return output.split('\n').filter((line) => !warning.test(line)).map((line) => (line.length > 400 ? `${line.slice(0, 400)}...` : line)).join('\n').trim();
}

function fail(message, output = '') {
  console.error(`build-snapshot: ${message}${output ? `\n${readable(output)}` : ''}`);
  process.exit(1);
}

/** `dist`: the dist/ folder to use (test/support/production-bundle.ts builds elsewhere); this checkout's by default. */
function buildRouterSnapshot(dist = join(fileURLToPath(new URL('..', import.meta.url)), 'dist')) {
  const bundle = join(dist, 'bundle');
  const script = join(bundle, 'router-snapshot.cjs');
  const blob = join(bundle, 'router.blob');
  const about = `${blob}.json`;
  if (!existsSync(script)) fail(`no ${script}; run npm run build (cli/bundle-entrypoints.js) first`);
  // A stale blob beside a failed build would be started by kubeloop dev: gone first.
  rmSync(blob, { force: true });
  rmSync(about, { force: true });
  const args = snapshotBuildArgs(script, blob);
  const built = spawnSync(process.execPath, args, { encoding: 'utf8' });
  // The configuration is the build's input only.
  rmSync(args.at(-1), { force: true });
  if (built.status !== 0 || !existsSync(blob)) fail(`node --build-snapshot ${script} failed (${built.status ?? built.signal})`, `${built.stdout}${built.stderr}`);
  // A blob Node builds can still fail when a process starts from it: start one that only prints the usage.
  const started = spawnSync(process.execPath, ['--snapshot-blob', blob, 'router', '--help'], { encoding: 'utf8' });
  if (started.status !== 0 || !started.stdout.startsWith('usage: kubeloop router')) {
    rmSync(blob, { force: true });
    fail(`a router started from ${blob} did not print its usage (exit ${started.status ?? started.signal})`, `${started.stdout}${started.stderr}`);
  }
  // Node refuses a blob made by another version, and the script's paths are this folder's: kubeloop dev checks both
  // (cli/router-snapshot.ts) before starting a router from it.
  writeFileSync(about, `${JSON.stringify({ node: process.version, arch: process.arch, platform: process.platform, script }, null, 2)}\n`);
  console.log(`build-snapshot: ${blob} (Node ${process.version})`);
}

// Run as the build step; imported (bench/router-bench-kit.ts) for snapshotBuildArgs alone.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) buildRouterSnapshot(process.argv[2] && resolve(process.argv[2]));
