// The esbuild settings of the router's V8 startup snapshot (cli/build-snapshot.js): one CommonJS script that loads
// the router command while `node --build-snapshot` runs, without loading what a snapshot cannot hold (docs/performance.md).
import { fileURLToPath } from 'node:url';
import { productionBundleOptions } from './bundle-options.js';

const cli = fileURLToPath(new URL('.', import.meta.url));

/** Built-ins whose native state a snapshot cannot hold (the HTTP parser binding, TLS's external references). */
const NETWORK_BUILTINS = /^(node:)?(http|https|http2|tls)$/;

/**
 * Exports of those built-ins that dependencies read at their top level, while the snapshot is built, and keep.
 * Each gets a stand-in that forwards to the real export once loaded; a stand-in is a different object, so an
 * identity comparison with it differs from the real one. A new entry fails the build until it is judged here.
 */
export const ALLOWED_STAND_INS = new Map([
  // undici's util.destroy() nulls `socket` on a stream whose constructor is http.IncomingMessage: the router never
  // hands undici one, so the comparison (false with the stand-in) changes nothing.
  ['http.IncomingMessage', 'undici core/util.js'],
]);

/**
 * Stand-ins for the network built-ins while the snapshot is built (the module loads on first use after it is
 * restored): data exports (STATUS_CODES, constants, maxHeaderSize) are copied from a child process of the same
 * Node, so they are real values; functions and classes are forwarding proxies, listed by the build.
 */
const networkStandIns = {
  name: 'network-stand-ins',
  setup(b) {
    b.onResolve({ filter: NETWORK_BUILTINS }, (args) => {
      // The stand-in's own require is the real module.
      if (args.namespace === 'network-stand-in') return { path: args.path, external: true };
      return { path: args.path.replace(/^node:/, ''), namespace: 'network-stand-in' };
    });
    b.onLoad({ filter: /.*/, namespace: 'network-stand-in' }, (args) => ({
      loader: 'js',
      contents: standInModule(args.path),
    }));
  },
};

/** The CommonJS source standing in for built-in `name` (see networkStandIns). */
function standInModule(name) {
  return `const { startupSnapshot } = require('node:v8');
let loaded;
const load = () => (loaded ??= require('node:${name}'));
const building = () => loaded === undefined && startupSnapshot.isBuildingSnapshot();
// Each export's kind, and the value of those that are data, read in a child process of this Node.
const shape = startupSnapshot.isBuildingSnapshot() ? JSON.parse(require('node:child_process').execFileSync(process.execPath, ['-e', ${JSON.stringify(SHAPE_SCRIPT)}, 'node:${name}'], { encoding: 'utf8' })) : {};
const standIns = new Map();
function standIn(key) {
  if (!standIns.has(key)) {
    const real = () => load()[key];
    const proxy = new Proxy(function () {}, {
      apply: (_t, self, args) => Reflect.apply(real(), self, args),
      construct: (_t, args, newTarget) => Reflect.construct(real(), args, newTarget === proxy ? real() : newTarget),
      get: (_t, k) => real()[k],
      set: (_t, k, v) => Reflect.set(real(), k, v),
      has: (_t, k) => k in real(),
      getPrototypeOf: () => Object.getPrototypeOf(real()),
    });
    standIns.set(key, proxy);
    (globalThis.__kubeloopStandIns ??= []).push('${name}.' + String(key));
  }
  return standIns.get(key);
}
function exported(key) {
  if (!building()) return load()[key];
  const known = typeof key === 'string' && Object.hasOwn(shape, key) ? shape[key] : undefined;
  if (known === undefined) return undefined;
  return known.data ? known.value : standIn(key);
}
module.exports = new Proxy({}, {
  get: (_t, key) => exported(key),
  has: (_t, key) => (building() ? Object.hasOwn(shape, key) : key in load()),
  ownKeys: () => (building() ? Object.keys(shape) : Reflect.ownKeys(load())),
  getOwnPropertyDescriptor: (_t, key) => {
    // A getter: esbuild's __toESM copies every descriptor, which must not make a stand-in of every export.
    if (building()) return Object.hasOwn(shape, key) ? { configurable: true, enumerable: true, get: () => exported(key) } : undefined;
    const found = Object.getOwnPropertyDescriptor(load(), key);
    return found && { ...found, configurable: true };
  },
});
`;
}

/**
 * Prints a built-in's exports as {name: {data, value}}: primitives and plain JSON values (STATUS_CODES, METHODS,
 * constants) are data, copied by value; functions, classes and instances (globalAgent) are not.
 */
const SHAPE_SCRIPT = `const m = require(process.argv[1]); const out = {};
const plain = (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v) || (typeof v === 'object' && (Array.isArray(v) || [Object.prototype, null].includes(Object.getPrototypeOf(v))) && Object.values(v).every(plain));
for (const key of Object.keys(m)) { const value = m[key]; out[key] = plain(value) ? { data: true, value } : { data: false }; }
process.stdout.write(JSON.stringify(out));`;

/** client-node (exec and auth-provider kubeconfigs only) through require: a snapshot's script has no import(). */
const clientNodeThroughRequire = {
  name: 'client-node-through-require',
  setup(b) {
    b.onResolve({ filter: /^@kubernetes\/client-node$/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, namespace: 'through-require' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'through-require' }, (args) => ({
      loader: 'js',
      // Resolved from the script's own folder at run time, as the ES bundle's import() is.
      contents: `module.exports = require('node:module').createRequire(__filename)(${JSON.stringify(args.path)});`,
    }));
  },
};

/**
 * undici's index loads its fetch, WebSocket, caches, mocks and proxy agents with the dispatcher, and a snapshot
 * deserialises all of it at every start (~1 MB of the blob, ~4 ms of CPU). The router's code takes undici's
 * dispatcher, errors and connector only: its `import ... from 'undici'` gets those, with undici's own API
 * (request(), stream()...) on every dispatcher as its index puts it there. A name this leaves out fails the build
 * ("No matching export"); undici's own modules keep their imports.
 */
const UNDICI_CORE = `import Agent from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import errors from 'undici/lib/core/errors.js';
import buildConnector from 'undici/lib/core/connect.js';
Object.assign(Dispatcher.prototype, api);
export { Agent, Dispatcher, errors, buildConnector };
`;

const undiciCore = {
  name: 'undici-core',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) => (args.importer.includes('/node_modules/') ? undefined : { path: 'undici', namespace: 'undici-core' }));
    b.onLoad({ filter: /.*/, namespace: 'undici-core' }, () => ({ loader: 'js', resolveDir: cli, contents: UNDICI_CORE }));
  },
};

/**
 * Runs first in the snapshot's script. crypto.randomUUID() keeps a batch of random bytes: one call while building
 * would put the batch in the snapshot and every process started from it would repeat the same UUIDs, so a call
 * then fails the build. A diagnostics channel is held weakly with a finalizer: one a module makes and drops while
 * loading (which of them depended on when V8 collected) left a finalizer pending, and V8 aborts the snapshot
 * ("dirty_js_finalization_registries_list"), so every channel made while building is held until the process is
 * restored. import.meta.url is the script's own URL (CommonJS has no import.meta).
 */
const BANNER = `var __kubeloopImportMetaUrl = require('node:url').pathToFileURL(__filename).href;
{
  const crypto = require('node:crypto');
  const diagnostics = require('node:diagnostics_channel');
  const { startupSnapshot } = require('node:v8');
  const randomUUID = crypto.randomUUID;
  crypto.randomUUID = function (options) {
    if (startupSnapshot.isBuildingSnapshot()) throw new Error('crypto.randomUUID() called while the startup snapshot is built: every process would repeat its UUIDs');
    return randomUUID.call(this, options);
  };
  const held = [];
  const holding = (make) => function (name) {
    const made = make.call(this, name);
    if (startupSnapshot.isBuildingSnapshot()) held.push(made);
    return made;
  };
  const { channel, tracingChannel } = diagnostics;
  diagnostics.channel = holding(channel);
  diagnostics.tracingChannel = holding(tracingChannel);
  startupSnapshot.addDeserializeCallback(() => {
    crypto.randomUUID = randomUUID;
    Object.assign(diagnostics, { channel, tracingChannel });
    held.length = 0;
  });
}`;

/**
 * esbuild options for the snapshot script of `entry` (a file whose top level loads everything and calls
 * v8.startupSnapshot.setDeserializeMainFunction), written to `outfile`; the caller adds its own plugins first.
 */
export function snapshotBundleOptions(outfile) {
  const { outdir: _outdir, outExtension: _ext, chunkNames: _chunks, splitting: _splitting, banner: _banner, ...shared } = productionBundleOptions('.');
  return {
    ...shared,
    // One script, nothing loaded by import(): lazily loaded modules are in it, run when first used.
    format: 'cjs',
    outfile,
    define: { 'import.meta.url': '__kubeloopImportMetaUrl' },
    banner: { js: BANNER },
    plugins: [clientNodeThroughRequire, undiciCore, networkStandIns],
  };
}

/**
 * The snapshot script's entry: its top level loads the router command (what the snapshot holds), checks the
 * stand-ins made against ALLOWED_STAND_INS, and names what runs when a process starts from the snapshot:
 * `node --snapshot-blob router.blob router [flags]`, the same command line as `node cli/bin.js router [flags]`.
 * `commandModule` (from cli/): the router command's module, or a test's.
 */
export function routerSnapshotEntry(commandModule = './commands/router.ts') {
  return {
    resolveDir: cli,
    loader: 'ts',
    sourcefile: 'router-snapshot-entry.ts',
    contents: `import { startupSnapshot } from 'node:v8';
import { runLoadedCommand } from './run-cli.ts';
import * as router from ${JSON.stringify(commandModule)};
const allowed = new Set(${JSON.stringify([...ALLOWED_STAND_INS.keys()])});
const unexpected = ((globalThis as { __kubeloopStandIns?: string[] }).__kubeloopStandIns ?? []).filter((name) => !allowed.has(name));
if (unexpected.length > 0) throw new Error(\`read while the snapshot was built, so kept as stand-ins: \${unexpected.join(', ')}; judge each in cli/snapshot-bundle.js (ALLOWED_STAND_INS)\`);
startupSnapshot.setDeserializeMainFunction(() => {
  const [, command, ...argv] = process.argv;
  if (command !== 'router') {
    console.error(\`kubeloop: this snapshot runs "router" only, not "\${command ?? ''}"\`);
    process.exitCode = 2;
    return;
  }
  void runLoadedCommand('router', router, argv).then((code) => (process.exitCode = code));
});
`,
  };
}
