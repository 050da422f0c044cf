// The kubeloop package's root folder (charts/, samples/), found from the CLI whether it runs from source
// (cli/...) or compiled (dist/cli/...), in this repository or installed under node_modules/kubeloop.
import { existsSync } from 'node:fs';
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
