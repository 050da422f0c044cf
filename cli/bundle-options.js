// The esbuild settings of kubeloop's production bundles (cli/bundle-entrypoints.js), shared with bench:router,
// which bundles its router child the same way so that its figures are the images'.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const httpThroughRequire = {
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
export const productionPlugins = [lazyTlsBuiltins, httpThroughRequire];

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
