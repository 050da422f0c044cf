import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ensureBinaries } from './binaries.ts';

const FILES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'etcd', 'kwok', 'helm'];
const dirs: string[] = [];

async function dirWith(files: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-bin-test-'));
  dirs.push(dir);
  for (const file of files) {
    await writeFile(join(dir, file), '#!/bin/sh\n');
    await chmod(join(dir, file), 0o755);
  }
  return dir;
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('ensureBinaries', () => {
  it('uses the prebuilt binaries in KUBELOOP_K8S_BIN without building anything', async () => {
    const bin = await dirWith(FILES);
    vi.stubEnv('KUBELOOP_K8S_BIN', bin);
    vi.stubEnv('KUBELOOP_CACHE_DIR', await dirWith([]));
    vi.stubEnv('PATH', '/nonexistent');
    const binaries = await ensureBinaries();
    expect(binaries.kubeApiserver).toBe(join(bin, 'kube-apiserver'));
    expect(binaries.helm).toBe(join(bin, 'helm'));
  });

  it('takes what envtest provides from KUBEBUILDER_ASSETS and the rest from KUBELOOP_K8S_BIN', async () => {
    const assets = await dirWith(['kube-apiserver', 'etcd', 'kubectl']);
    const bin = await dirWith(FILES);
    vi.stubEnv('KUBELOOP_K8S_BIN', '');
    vi.stubEnv('KUBEBUILDER_ASSETS', assets);
    vi.stubEnv('KUBELOOP_CACHE_DIR', await dirWith([]));
    vi.stubEnv('PATH', '/nonexistent');
    await expect(ensureBinaries()).rejects.toThrow(/kube-controller-manager, kube-scheduler, kwok, helm/);
    vi.stubEnv('KUBELOOP_K8S_BIN', bin);
    expect((await ensureBinaries()).etcd).toBe(join(bin, 'etcd'));
  });

  it('without Go and without binaries, says what to install and which variables point at prebuilt ones', async () => {
    vi.stubEnv('KUBELOOP_K8S_BIN', '');
    vi.stubEnv('KUBEBUILDER_ASSETS', '');
    vi.stubEnv('KUBELOOP_CACHE_DIR', await dirWith([]));
    vi.stubEnv('PATH', '/nonexistent');
    const message = await ensureBinaries().then(
      () => 'resolved',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(message).toMatch(/no Go toolchain on PATH/);
    expect(message).toMatch(/install Go >= 1\.26/);
    expect(message).toMatch(/KUBELOOP_K8S_BIN/);
    expect(message).toMatch(/KUBEBUILDER_ASSETS/);
  });

  it('ignores a file that is not executable', async () => {
    const bin = await dirWith(FILES);
    await chmod(join(bin, 'kwok'), 0o644);
    vi.stubEnv('KUBELOOP_K8S_BIN', bin);
    vi.stubEnv('KUBEBUILDER_ASSETS', '');
    vi.stubEnv('KUBELOOP_CACHE_DIR', await dirWith([]));
    vi.stubEnv('PATH', '/nonexistent');
    await expect(ensureBinaries()).rejects.toThrow(/needs kwok /);
  });
});
