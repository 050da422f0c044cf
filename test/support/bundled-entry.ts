// A test's entry file bundled with the production settings (cli/bundle-options.js) in a temporary folder and
// run with this Node: for tests of what the images' bundling changes (lazy builtins, yaml imported on use).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { productionBundleOptions, productionPlugins } from '../../cli/bundle-options.js';

const run = promisify(execFile);

export interface BundledEntry {
  /** Runs the bundled entry and parses the JSON it printed. */
  run(): Promise<unknown>;
  remove(): Promise<void>;
}

/** Writes `files(dir)` (names to contents) into a new folder, bundles `entry` among them and returns how to run it. */
export async function bundleEntry(entry: string, files: (dir: string) => Record<string, string>): Promise<BundledEntry> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-bundle-'));
  try {
    for (const [name, content] of Object.entries(files(dir))) await writeFile(join(dir, name), content);
    await build({ entryPoints: [join(dir, entry)], plugins: productionPlugins, ...productionBundleOptions(join(dir, 'out')) });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    run: async () => JSON.parse((await run(process.execPath, [join(dir, 'out', entry.replace(/\.[cm]?[jt]s$/, '.mjs'))])).stdout) as unknown,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
