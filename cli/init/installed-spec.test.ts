// The kubeloop dependency `kubeloop init` writes, from how the running kubeloop was installed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installedKubeloopSpec, specFromInstall } from './installed-spec.ts';

describe('specFromInstall', () => {
  it('keeps a tarball npm recorded relative to the project (npm install ./x.tgz, npx --package=x.tgz)', () => {
    expect(specFromInstall({ root: '/p/node_modules/kubeloop', installedIn: '/p', lock: { resolved: 'file:../dl/kubeloop-0.1.0.tgz' }, built: true })).toBe('file:/dl/kubeloop-0.1.0.tgz');
  });

  it('keeps a linked folder (npm install ../kubeloop)', () => {
    expect(specFromInstall({ root: '/p/node_modules/kubeloop', installedIn: '/p', lock: { resolved: '../kubeloop', link: true }, built: true })).toBe('file:/kubeloop');
  });

  it('leaves a registry install to the version range', () => {
    expect(specFromInstall({ root: '/p/node_modules/kubeloop', installedIn: '/p', lock: { resolved: 'https://registry.npmjs.org/kubeloop/-/kubeloop-0.1.0.tgz' }, built: true })).toBeUndefined();
    expect(specFromInstall({ root: '/p/node_modules/kubeloop', installedIn: '/p', built: true })).toBeUndefined();
  });

  it('uses a built folder of its own (npm link, a folder dependency) but not a source checkout', () => {
    expect(specFromInstall({ root: '/src/kubeloop', built: true })).toBe('file:/src/kubeloop');
    expect(specFromInstall({ root: '/src/kubeloop', built: false })).toBeUndefined();
  });
});

describe('installedKubeloopSpec', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubeloop-spec-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reads npm's hidden lockfile of the project that holds the package", () => {
    const project = join(root, 'npx-cache');
    mkdirSync(join(project, 'node_modules', 'kubeloop'), { recursive: true });
    writeFileSync(join(project, 'node_modules', '.package-lock.json'), JSON.stringify({ packages: { 'node_modules/kubeloop': { resolved: 'file:../kubeloop-0.1.0.tgz' } } }));
    expect(installedKubeloopSpec(join(project, 'node_modules', 'kubeloop'))).toBe(`file:${join(root, 'kubeloop-0.1.0.tgz')}`);
  });
});
