// Packs this checkout as users get it (`npm pack`, which builds on prepack) from a copy of its files, so a
// build never writes dist/ into the working tree that other suites run from source.
import { execFile } from 'node:child_process';
import { cp, mkdir, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface PackedTarball {
  path: string;
  bytes: number;
  files: number;
}

/** The repository's tracked and new (not ignored) files, as `git ls-files` lists them. */
async function sourceFiles(): Promise<string[]> {
  const { stdout } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
  return stdout.split('\0').filter((f) => f !== '');
}

export async function packTarball(workDir: string): Promise<PackedTarball> {
  const copy = join(workDir, 'kubeloop-src');
  for (const file of await sourceFiles()) {
    // A file deleted in the working tree is still listed until staged.
    const from = join(REPO, file);
    if (!(await stat(from).catch(() => undefined))) continue;
    await mkdir(join(copy, file, '..'), { recursive: true });
    await cp(from, join(copy, file));
  }
  await symlink(join(REPO, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: copy, maxBuffer: 64 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; size: number; entryCount: number }>;
  if (!packed) throw new Error(`npm pack printed no result: ${stdout.slice(0, 500)}`);
  return { path: join(workDir, packed.filename), bytes: packed.size, files: packed.entryCount };
}
