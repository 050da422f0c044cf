// An esbuild plugin of the production bundles: a few dependencies' top-level require()s of built-ins that only
// some paths use become requires at the point of use, so a process that never takes those paths never loads them.
import { readFile } from 'node:fs/promises';

/**
 * Per dependency file, the exact text to replace and its replacement. An idle function loads none of these
 * built-ins otherwise (~1 MiB of its RSS; docs/performance.md, "Function memory"): zlib is prom-client's
 * Pushgateway's (kubeloop pushes nothing), assert sonic-boom's and thread-stream's checks (pino's destination
 * and its transports).
 * A dependency update that changes one of these lines fails the build (below): look again whether it is needed.
 */
export const DEFERRED_REQUIRES = {
  'prom-client/lib/pushgateway.js': [["const { gzipSync } = require('zlib');", "const gzipSync = (...args) => require('zlib').gzipSync(...args);"]],
  'thread-stream/index.js': [["const assert = require('assert')", "const assert = (...args) => require('assert')(...args)"]],
  'sonic-boom/index.js': [["const assert = require('assert')", "const assert = (...args) => require('assert')(...args)"]],
};

const FILES = new RegExp(`node_modules/(${Object.keys(DEFERRED_REQUIRES).map((file) => file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`);

/** Applies a file's replacements, each exactly once; throws naming the file and the text when one is missing. */
export function deferRequires(file, source) {
  let text = source;
  for (const [from, to] of DEFERRED_REQUIRES[file] ?? []) {
    const at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + from.length) >= 0) throw new Error(`deferred-requires: ${file} no longer holds exactly one ${JSON.stringify(from)}`);
    text = text.slice(0, at) + to + text.slice(at + from.length);
  }
  return text;
}

export const deferredRequires = {
  name: 'deferred-requires',
  setup(b) {
    b.onLoad({ filter: FILES }, async (args) => {
      const file = FILES.exec(args.path.replaceAll('\\', '/'))[1];
      return { loader: 'js', contents: deferRequires(file, await readFile(args.path, 'utf8')) };
    });
  },
};
