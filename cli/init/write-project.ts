// Writes a generated project into a folder: creates it when missing, refuses one that holds anything
// unless forced (then only the generated files are overwritten; others stay).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProjectFile } from './templates/index.ts';

export class NotEmptyError extends Error {
  override name = 'NotEmptyError';
}

export async function writeProject(dir: string, files: ProjectFile[], force: boolean): Promise<void> {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new NotEmptyError(`${dir} exists and is not a folder`);
    const present = readdirSync(dir);
    if (present.length > 0 && !force) {
      throw new NotEmptyError(`${dir} is not empty (${present.slice(0, 5).join(', ')}${present.length > 5 ? ', ...' : ''}); choose an empty folder or pass --force to overwrite the generated files`);
    }
  }
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content);
  }
}
