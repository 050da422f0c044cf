// The kubeloop package's root folder (charts/, samples/), found from the CLI whether it runs from source
// (cli/...) or compiled (dist/cli/...), in this repository or installed under node_modules/kubeloop.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'charts', 'kubeloop'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the kubeloop package (package.json and charts/kubeloop) above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

/**
 * kubeloop's own package.json, nearest above the CLI. Unlike packageRoot it needs no charts/: the images ship
 * package.json and dist/ only, and `kubeloop --version` must work there too.
 */
export function ownPackageJson(from: string = import.meta.url): { name: string; version: string } {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'kubeloop' && typeof pkg.version === 'string') return { name: pkg.name, version: pkg.version };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find kubeloop's package.json above ${fileURLToPath(from)}`);
    dir = parent;
  }
}
