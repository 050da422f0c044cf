// The console UI's static files: from the package's prebuilt dist/console-ui (an installed kubeloop, which
// has no esbuild), or bundled in memory from cli/console/ui when kubeloop runs from its sources.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../package-root.ts';

export type ConsoleAssets = Map<string, { contentType: string; body: Buffer }>;

const FILES = [
  ['/', 'index.html', 'text/html; charset=utf-8'],
  ['/app.js', 'app.js', 'text/javascript; charset=utf-8'],
  ['/app.css', 'app.css', 'text/css; charset=utf-8'],
] as const;

export async function loadConsoleAssets(): Promise<ConsoleAssets> {
  const fromSource = import.meta.url.endsWith('.ts');
  const built = join(packageRoot(), 'dist', 'console-ui');
  if (!fromSource && existsSync(join(built, 'index.html'))) {
    const assets: ConsoleAssets = new Map();
    for (const [path, file, contentType] of FILES) assets.set(path, { contentType, body: await readFile(join(built, file)) });
    return assets;
  }
  // esbuild is a devDependency: present in a checkout, which is where the sources run from.
  if (!fromSource) throw new Error(`the console's UI is not built (${built}/index.html is missing): run npm run build`);
  const { bundleConsoleUi } = await import('./bundle-ui.js');
  return bundleConsoleUi();
}
