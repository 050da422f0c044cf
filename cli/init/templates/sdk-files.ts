// The Python or Go SDK as `kubeloop init --language python|go` vendors it into a project: the package's
// own copy (sdk/ in the npm package), without its tests, so the project builds offline and in Docker
// with nothing but the language's standard library.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../../package-root.ts';
import type { ProjectFile } from './project-file.ts';

const SKIPPED = (path: string): boolean => /(^|\/)(__pycache__|tests)(\/|$)|_test\.go$|\.pyc$/.test(path);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** Every file under sdk/<from> (a file or folder of the package), placed under `to` in the project. */
export function sdkFiles(from: string, to: string): ProjectFile[] {
  const root = join(packageRoot(), 'sdk');
  const source = join(root, from);
  const files = statSync(source).isDirectory() ? walk(source) : [source];
  return files
    .map((file) => ({ file, path: relative(source, file) }))
    .filter(({ path }) => !SKIPPED(path))
    .sort((a, b) => a.path.localeCompare(b.path))
    .map(({ file, path }) => ({ path: path === '' ? to : `${to}/${path}`, content: readFileSync(file, 'utf8') }));
}
