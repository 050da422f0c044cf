// npm run bench:package: the out-of-repo path's costs, from a packed tarball: its size, `npx kubeloop init`,
// `npm install` of the generated project and its first `npm test` (init-to-green). Baseline, in the same
// run: `npm install` of the same project's dev tools alone (typescript, tsx, @types/node) in an empty
// folder, so the ratio shows what depending on kubeloop adds. Both installs use the npm cache as it is.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packTarball } from '../test/support/package-tarball.ts';

const run = promisify(execFile);

async function seconds(step: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await step();
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'kubeloop-bench-package-'));
  try {
    const tarball = await packTarball(work);
    const init = await seconds(() => run('npx', ['--yes', `--package=${tarball.path}`, 'kubeloop', 'init', 'app', `--kubeloop-spec=file:${tarball.path}`], { cwd: work }));
    const app = join(work, 'app');
    const install = await seconds(() => run('npm', ['install', '--no-audit', '--no-fund'], { cwd: app }));
    const test = await seconds(() => run('npm', ['test'], { cwd: app }));

    const generated = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const baseline = join(work, 'baseline');
    await mkdir(baseline);
    await writeFile(join(baseline, 'package.json'), JSON.stringify({ name: 'baseline', private: true, type: 'module', devDependencies: generated.devDependencies }));
    const baselineInstall = await seconds(() => run('npm', ['install', '--no-audit', '--no-fund'], { cwd: baseline }));
    const { stdout } = await run('du', ['-sk', join(app, 'node_modules')]);
    const { stdout: baseSize } = await run('du', ['-sk', join(baseline, 'node_modules')]);

    const kib = (text: string) => Number(text.split('\t')[0]);
    console.log(`tarball:                    ${(tarball.bytes / 1024).toFixed(0)} KiB packed, ${tarball.files} files`);
    console.log(`npx kubeloop init:          ${init.toFixed(1)} s`);
    console.log(`npm install (project):      ${install.toFixed(1)} s, node_modules ${(kib(stdout) / 1024).toFixed(0)} MiB`);
    console.log(`npm install (baseline):     ${baselineInstall.toFixed(1)} s, node_modules ${(kib(baseSize) / 1024).toFixed(0)} MiB  (typescript, tsx, @types/node only)`);
    console.log(`first npm test:             ${test.toFixed(1)} s`);
    console.log(`init-to-green:              ${(init + install + test).toFixed(1)} s`);
    console.log(`install ratio vs baseline:  ${(install / baselineInstall).toFixed(2)}x`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
