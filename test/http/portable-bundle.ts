// Bundles a module for a runtime without Node (platform "neutral": no node: built-ins, no Node-only
// package entry points), as a Workers/Deno/Bun deployment would, and reports what went into the bundle.
import { build, type Metafile } from 'esbuild';

export interface PortableBundle {
  code: string;
  /** Repository-relative paths of every module in the bundle. */
  inputs: string[];
}

export async function bundlePortable(entry: string): Promise<PortableBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    // Conditions a Workers-style bundler uses; "node" is deliberately absent.
    conditions: ['workerd', 'worker', 'browser', 'import', 'default'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  return { code: output.text, inputs: Object.keys((result.metafile as Metafile).inputs) };
}
