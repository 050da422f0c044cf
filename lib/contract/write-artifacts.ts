// `npm run schemas`: writes the files generated from lib/contract/schemas.ts; artifacts.test.ts fails when
// a committed copy differs from what this would write.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractArtifacts } from './artifacts.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
for (const [path, content] of Object.entries(contractArtifacts())) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  console.log(`wrote ${path}`);
}
