// How the running kubeloop was installed, as a package.json dependency spec for the project `kubeloop init`
// writes: a tarball or a folder stays that tarball or folder, so `npm install` there finds what ran init
// instead of asking the registry for a version it may not have (undefined: the registry, `^<version>`).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** One package's entry in npm's lockfile (`packages["node_modules/kubeloop"]`). */
export interface LockEntry {
  resolved?: string;
  link?: boolean;
}

/**
 * The decision, given the package's folder and what npm recorded for it. `installedIn` is the project whose
 * node_modules holds the package (npx's cache folder for `npx --package=<tarball>`), absent when the package
 * runs from a folder of its own (a checkout, `npm link`, a folder dependency: Node resolves the symlink).
 */
export function specFromInstall(install: { root: string; installedIn?: string; lock?: LockEntry; built: boolean }): string | undefined {
  if (install.installedIn === undefined) return install.built ? `file:${install.root}` : undefined;
  const resolved = install.lock?.resolved;
  if (resolved === undefined) return undefined;
  // npm writes tarballs and folders relative to the project: "file:../kubeloop-0.1.0.tgz", "../kubeloop".
  if (install.lock?.link) return `file:${resolve(install.installedIn, resolved.replace(/^file:/, ''))}`;
  if (resolved.startsWith('file:')) return `file:${resolve(install.installedIn, resolved.slice('file:'.length))}`;
  return undefined;
}

function lockEntry(project: string): LockEntry | undefined {
  for (const file of [join(project, 'node_modules', '.package-lock.json'), join(project, 'package-lock.json')]) {
    if (!existsSync(file)) continue;
    try {
      const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages?: Record<string, LockEntry> };
      const entry = lock.packages?.['node_modules/kubeloop'];
      if (entry) return entry;
    } catch {
      // A lockfile npm is rewriting or that someone broke: fall back to the registry spec.
    }
  }
  return undefined;
}

/** The dependency spec for the kubeloop installed at `root` (its package folder), when it did not come from the registry. */
export function installedKubeloopSpec(root: string): string | undefined {
  const parent = dirname(root);
  const installedIn = basename(parent) === 'node_modules' ? dirname(parent) : undefined;
  // From a source checkout (no dist/) the package's exports do not resolve: only a built folder will do.
  const built = existsSync(join(root, 'dist', 'lib', 'sdk', 'index.js'));
  if (installedIn === undefined) return specFromInstall({ root, built });
  const lock = lockEntry(installedIn);
  return specFromInstall({ root, installedIn, built, ...(lock ? { lock } : {}) });
}
