// Finds the control-plane binaries (KUBELOOP_K8S_BIN, KUBEBUILDER_ASSETS, the version-keyed cache) and
// builds whatever is missing with Go. Without Go and without binaries it says what to install.
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildComponent, goVersion, type ProgressFn } from './go-build.ts';
import { pidAlive } from './pid-alive.ts';
import { BINARY_COMPONENT, cacheRoot, componentBinDir, componentVersion, VERSIONS, type BinaryKey, type Component } from './versions.ts';

export interface ClusterBinaries {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  etcd: string;
  kwok: string;
  helm: string;
}

export interface EnsureBinariesOptions {
  onProgress?: ProgressFn;
  /** Kubernetes binaries of this version (e.g. the oldest supported) from its own cache dir; kubernetesVersion() by default. */
  kubernetesVersion?: string;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Directories searched before the cache: explicit override first, then the envtest convention. */
function prebuiltDirs(): string[] {
  return [process.env.KUBELOOP_K8S_BIN, process.env.KUBEBUILDER_ASSETS].filter((d): d is string => !!d && d.length > 0);
}

async function locate(key: BinaryKey, kubernetes: string | undefined): Promise<string | undefined> {
  const { file, component } = BINARY_COMPONENT[key];
  // Prebuilt directories hold one version: an explicitly asked Kubernetes version comes from its cache dir.
  const prebuilt = component === 'kubernetes' && kubernetes ? [] : prebuiltDirs();
  for (const dir of [...prebuilt, componentBinDir(component, kubernetes)]) {
    const candidate = join(dir, file);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function locateAll(kubernetes: string | undefined): Promise<{ found: Partial<ClusterBinaries>; missing: BinaryKey[] }> {
  const found: Partial<ClusterBinaries> = {};
  const missing: BinaryKey[] = [];
  for (const key of Object.keys(BINARY_COMPONENT) as BinaryKey[]) {
    const path = await locate(key, kubernetes);
    if (path) found[key] = path;
    else missing.push(key);
  }
  return { found, missing };
}

/** One builder at a time per cache (two test runs or a CI step and a dev shell may race). */
export async function withBuildLock<T>(onProgress: ProgressFn, body: () => Promise<T>, lockName = 'build.lock'): Promise<T> {
  const lockPath = join(cacheRoot(), lockName);
  await mkdir(cacheRoot(), { recursive: true });
  let waitingSince = 0;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (!Number.isInteger(holder) || holder <= 0 || !pidAlive(holder)) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (waitingSince === 0) {
        waitingSince = Date.now();
        onProgress(`another kubeloop process (pid ${holder}) is building the binaries; waiting for it`);
      }
      await sleep(2000);
    }
  }
  try {
    return await body();
  } finally {
    await rm(lockPath, { force: true });
  }
}

function installHint(missing: BinaryKey[], kubernetes: string | undefined): string {
  const files = missing.map((k) => BINARY_COMPONENT[k].file).join(', ');
  return (
    `kubeloop needs ${files} for its local control plane and cannot build them: no Go toolchain on PATH.\n` +
    `Either install Go >= 1.26 (https://go.dev/dl/; it fetches Kubernetes ${componentVersion('kubernetes', kubernetes)}, etcd ${VERSIONS.etcd}, ` +
    `kwok ${VERSIONS.kwok} and helm ${VERSIONS.helm} from the Go module proxy and builds them into ${join(cacheRoot(), 'bin')}),\n` +
    `or set KUBELOOP_K8S_BIN (or KUBEBUILDER_ASSETS) to a directory that holds prebuilt binaries named ${files}.`
  );
}

/**
 * Returns absolute paths of all seven binaries, building the missing ones (minutes when cold, shown
 * through onProgress; milliseconds when cached).
 */
export async function ensureBinaries(opts: EnsureBinariesOptions = {}): Promise<ClusterBinaries> {
  const onProgress = opts.onProgress ?? (() => {});
  const kubernetes = opts.kubernetesVersion;
  const first = await locateAll(kubernetes);
  if (first.missing.length === 0) return first.found as ClusterBinaries;
  const go = await goVersion();
  if (!go) throw new Error(installHint(first.missing, kubernetes));
  return withBuildLock(onProgress, async () => {
    // Another process may have finished the build while we waited for the lock.
    const { missing } = await locateAll(kubernetes);
    const components = [...new Set(missing.map((k) => BINARY_COMPONENT[k].component))] as Component[];
    if (components.length > 0) {
      const files = missing.map((k) => BINARY_COMPONENT[k].file);
      onProgress(`building ${files.join(', ')} with ${go} (cold: about 15-25 min on 2 cores, cached afterwards)`);
    }
    const started = Date.now();
    for (const component of components) {
      await buildComponent(component, missing.map((k) => BINARY_COMPONENT[k].file), onProgress, kubernetes);
    }
    const result = await locateAll(kubernetes);
    if (result.missing.length > 0) {
      throw new Error(`built the control plane but still missing: ${result.missing.map((k) => BINARY_COMPONENT[k].file).join(', ')}`);
    }
    if (components.length > 0) onProgress(`all binaries ready after ${Math.round((Date.now() - started) / 1000)}s`);
    return result.found as ClusterBinaries;
  });
}
