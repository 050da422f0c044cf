// The build context as Docker sends it: the repository's files that .dockerignore lets through, and a content
// hash of them (with the steps that use them), which keys the cached build stage.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface IgnoreRule {
  negate: boolean;
  pattern: RegExp;
}

function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i += 1;
      if (glob[i + 1] === '/') i += 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A pattern naming a directory covers what is under it too (Docker's rule).
  return new RegExp(`^${out}(/.*)?$`);
}

/** .dockerignore's rules, in order: the last one that matches a path decides. */
export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => (l.startsWith('!') ? { negate: true, pattern: globToRegExp(l.slice(1)) } : { negate: false, pattern: globToRegExp(l) }));
}

export function ignored(rules: IgnoreRule[], path: string): boolean {
  let out = false;
  for (const rule of rules) if (rule.pattern.test(path)) out = !rule.negate;
  return out;
}

/** Every file of the context under `sources` (paths relative to root), sorted. */
export async function contextFiles(root: string, sources: string[], rules: IgnoreRule[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    if (ignored(rules, rel)) {
      // A directory excluded by `**` may still hold included files (`!api/**`): keep walking directories.
      if (!(await isDirectory(join(root, rel)))) return;
    }
    if (await isDirectory(join(root, rel))) {
      for (const entry of (await readdir(join(root, rel))).sort()) await walk(rel ? `${rel}/${entry}` : entry);
    } else out.push(rel);
  };
  for (const source of sources) await walk(source.replace(/\/$/, ''));
  return [...new Set(out)].sort();
}

async function isDirectory(path: string): Promise<boolean> {
  return readdir(path).then(
    () => true,
    () => false,
  );
}

/** sha256 over the given strings and files' names and contents. */
export async function contentKey(parts: string[], root: string, files: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part}\0`);
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}
