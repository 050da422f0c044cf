// The esbuild settings of kubeloop's production bundles (cli/bundle-entrypoints.js), shared with bench:router,
// which bundles its router child the same way so that its figures are the images'.
import { createRequire, isBuiltin } from 'node:module';
import { deferredRequires } from './deferred-requires.js';

const require = createRequire(import.meta.url);

export const builtinsThroughRequire = {
  // An ES import of a built-in makes Node read every export of it, and some are getters that load whole
  // subsystems: node:http's WebSocket, CloseEvent and MessageEvent Node's internal undici (~50 ms of CPU at
  // start-up), node:fs's streams and `promises` fs/promises with readline and the REPL's history, node:util's
  // diff and setTraceSigInt worker_threads, node:crypto's webcrypto (~2 MiB of RSS in an idle function together).
  // Our import statements get the module through require instead, each named export read by a pure call that
  // the bundler drops when nothing imports that name. A dependency keeps its imports, of node:http(s) excepted.
  // node:module stays an import: the stand-in itself needs it.
  name: 'builtins-through-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_][a-z_0-9/]*$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!isBuiltin(name) || name === 'module') return undefined;
      // import('node:http') gets a namespace of every export: the plain properties alone, getters left out.
      if (args.kind === 'dynamic-import') return /^https?$/.test(name) ? { path: name, namespace: 'builtin-namespace' } : undefined;
      if (args.kind !== 'import-statement' || (!/^https?$/.test(name) && args.importer.includes('node_modules'))) return undefined;
      return { path: name, namespace: 'builtin-require' };
    });
    const prelude = (name) => [
      // Names of our own that no export of a built-in has.
      "import { createRequire as __kubeloopRequireOf } from 'node:module';",
      `const __kubeloopBuiltin = __kubeloopRequireOf(import.meta.url)('node:${name}');`,
      'export default __kubeloopBuiltin;',
    ];
    const exportNames = (name, withGetters) =>
      Object.entries(Object.getOwnPropertyDescriptors(require(name)))
        .filter(([key, d]) => /^[A-Za-z_$][\w$]*$/.test(key) && key !== 'default' && (withGetters || !d.get))
        .map(([key]) => key);
    b.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => ({
      loader: 'js',
      contents: [
        ...prelude(args.path),
        'const __kubeloopRead = (name) => __kubeloopBuiltin[name];',
        ...exportNames(args.path, true).map((key) => `export const ${key} = /* @__PURE__ */ __kubeloopRead('${key}');`),
      ].join('\n'),
    }));
    b.onLoad({ filter: /.*/, namespace: 'builtin-namespace' }, (args) => ({
      loader: 'js',
      contents: [...prelude(args.path), `export const { ${exportNames(args.path, false).join(', ')} } = __kubeloopBuiltin;`].join('\n'),
    }));
  },
};

/** Built-ins that dependencies require at their top level but only some processes use: TLS serving and clients. */
const LAZY_BUILTINS = /^(node:)?(https|http2|tls)$/;

export const lazyTlsBuiltins = {
  // fastify requires node:https and node:http2 at its top level, prom-client node:https for its Pushgateway; a
  // function serving plain HTTP uses neither, yet loading them (and node:tls with them) costs ~4-6 MiB of RSS.
  // Their require() calls get a stand-in that loads the module on first use of any of its properties.
  name: 'lazy-tls-builtins',
  setup(b) {
    b.onResolve({ filter: LAZY_BUILTINS }, (args) => {
      if (args.kind !== 'require-call') return undefined;
      // The stand-in's own require is the real module.
      if (args.namespace === 'lazy-builtin') return { path: args.path, external: true };
      return { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      loader: 'js',
      contents: `let loaded;\nconst load = () => (loaded ??= require('node:${args.path}'));\nmodule.exports = new Proxy({}, {\n  get: (_target, key) => load()[key],\n  has: (_target, key) => key in load(),\n  ownKeys: () => Reflect.ownKeys(load()),\n  getOwnPropertyDescriptor: (_target, key) => {\n    const found = Object.getOwnPropertyDescriptor(load(), key);\n    return found && { ...found, configurable: true };\n  },\n});\n`,
    }));
  },
};

/** The plugins every production bundle uses, after the caller's own. */
export const productionPlugins = [deferredRequires, lazyTlsBuiltins, builtinsThroughRequire];

/** Options every bundle shares; the caller adds entryPoints and its plugins (productionPlugins last). */
export function productionBundleOptions(outdir) {
  return {
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
    // Without whitespace and comments the bundle is a third smaller and pure ASCII: V8 keeps each script's
    // source in the heap for as long as the process runs, and one non-Latin-1 character in a comment (undici's
    // "response’s") made the router's 2 MB of source a 4 MB two-byte string. Names stay, so stack traces read.
    minifyWhitespace: true,
    logLevel: 'warning',
  };
}
