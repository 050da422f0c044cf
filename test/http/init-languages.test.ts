// `kubeloop init --language python|go`: the scaffold's own test is green at once (standard library only,
// the SDK vendored, no network), and the scaffold served as a real process passes `kubeloop conformance`
// with its fixture, signed as the chart signs it. Also: the npm package ships schemas/ and the SDKs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { run as conformance } from '../../cli/commands/conformance.ts';
import { run as init } from '../../cli/commands/init.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { captureCommand } from './capture-console.ts';
import { GO_ENV, startSample, type RunningSample } from './sample-processes.ts';

const exec = promisify(execFile);
const workDir = mkdtempSync(join(tmpdir(), 'kubeloop-init-languages-'));
const running: RunningSample[] = [];
afterAll(async () => {
  await Promise.all(running.map((sample) => sample.stop()));
  rmSync(workDir, { recursive: true, force: true });
});

async function scaffold(language: string, name: string, extra: string[] = []): Promise<string> {
  const dir = join(workDir, name);
  const { code, output } = await captureCommand(init, [dir, '--language', language, ...extra]);
  expect(code, output).toBe(0);
  return dir;
}

async function conformsSigned(command: string, args: string[], dir: string): Promise<void> {
  const secret = generateSigningSecret();
  // PYTHONPATH empty: the project's own kubeloop/ is what it imports, not this repository's SDK.
  const sample = await startSample(command, args, { KUBELOOP_SIGNING_SECRET: secret, PYTHONPATH: '' });
  running.push(sample);
  const { code, output } = await captureCommand(conformance, [sample.url, '--fixtures', join(dir, 'fixtures'), '--signing-secret', secret]);
  // Every conformance case, batches included (cli/conformance/cases.ts).
  expect(output).toMatch(/27 passed, 0 failed, 0 skipped$/);
  expect(code).toBe(0);
}

describe('kubeloop init --language', () => {
  it('python: python3 -m unittest passes at once, and the served function passes kubeloop conformance', async () => {
    const dir = await scaffold('python', 'shop-labels', ['--for', 'apps/v1/Deployment', '--owns', 'v1/Service']);
    const { stderr } = await exec('python3', ['-m', 'unittest', '-v'], { cwd: dir, env: { ...process.env, PYTHONPATH: '' } });
    expect(stderr).toMatch(/Ran 3 tests[\s\S]*\nOK/);
    expect(stderr).toContain('test_answers_every_recorded_fixture_as_recorded');
    await conformsSigned('python3', [join(dir, 'function.py')], dir);
  }, 60_000);

  it('python --related: function.py reads request["related"] where it would use it, and its test still passes', async () => {
    const dir = await scaffold('python', 'config-watch', ['--for', 'apps/v1/Deployment', '--related', 'v1/ConfigMap']);
    const source = readFileSync(join(dir, 'function.py'), 'utf8');
    expect(source).toContain('configmaps = kubeloop.related_of(request, "configmap")  # the ConfigMap named by annotation config-watch.example.com/configmap');
    const { stderr } = await exec('python3', ['-m', 'unittest'], { cwd: dir, env: { ...process.env, PYTHONPATH: '' } });
    expect(stderr).toMatch(/\nOK/);
  }, 60_000);

  it('go: go test ./... passes at once with the vendored SDK, and the served function passes kubeloop conformance', async () => {
    const dir = await scaffold('go', 'widget-labels', ['--for', 'example.com/v1alpha1/Widget']);
    const { stdout } = await exec('go', ['test', '-count=1', '-v', './...'], { cwd: dir, env: GO_ENV });
    expect(stdout).toContain('--- PASS: TestAnswersEveryRecordedFixtureAsRecorded');
    await exec('go', ['build', '-o', join(dir, 'function'), '.'], { cwd: dir, env: GO_ENV });
    await conformsSigned(join(dir, 'function'), [], dir);
  }, 300_000);

  it.each(['python', 'go'])('%s: writes the namespaced Loop and function.yaml for a namespace admin, with --cluster a ClusterLoop and values.yaml', async (language) => {
    const kinds = (dir: string, file: string) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => (d.toJS() as { kind: string }).kind);
    const dir = await scaffold(language, `${language}-team`);
    expect(kinds(dir, 'loop.yaml')).toEqual(['Loop', 'ServiceAccount', 'Role', 'RoleBinding', 'Role', 'RoleBinding']);
    expect(kinds(dir, 'function.yaml')).toEqual(['Deployment', 'Service']);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('kubectl apply -n <your-namespace> -f loop.yaml');
    const cluster = await scaffold(language, `${language}-cluster`, ['--cluster']);
    expect(kinds(cluster, 'loop.yaml')).toEqual(['ClusterLoop', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    expect(existsSync(join(cluster, 'values.yaml'))).toBe(true);
    expect(existsSync(join(cluster, 'function.yaml'))).toBe(false);
  });

  it('names the tarball kubeloop came from in its npx lines: a Python or Go project has no node_modules to find it in', async () => {
    const dir = await scaffold('python', 'from-tarball', ['--kubeloop-spec', 'file:/opt/kubeloop-0.1.0.tgz']);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npx --yes --package=/opt/kubeloop-0.1.0.tgz kubeloop conformance http://localhost:8080/');
    expect(readme).toContain('npx --yes --package=/opt/kubeloop-0.1.0.tgz kubeloop dev --function-command "python3 function.py" --loop loop.yaml');
    expect(readFileSync(join(await scaffold('go', 'from-registry', ['--kubeloop-spec', '^0.1.0']), 'README.md'), 'utf8')).toContain('`npx kubeloop replay fixtures');
  });

  it.each([
    ['python', 'validating'],
    ['python', 'mutating'],
    ['go', 'validating'],
    ['go', 'mutating'],
  ])('%s --admission %s: the scaffold\'s test passes at once, the hook and function.yaml for a namespace admin, and the served function passes kubeloop conformance', async (language, type) => {
    const dir = await scaffold(language, `${language}-${type}`, ['--admission', type]);
    const kinds = (file: string) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => (d.toJS() as { kind: string }).kind);
    // A mutating hook's ServiceAccount may update and patch what it matches, or the gateway will not serve it.
    expect(kinds('admission-hook.yaml')).toEqual(type === 'mutating' ? ['AdmissionHook', 'ServiceAccount', 'Role', 'RoleBinding'] : ['AdmissionHook', 'ServiceAccount']);
    if (type === 'mutating') {
      const role = parseAllDocuments(readFileSync(join(dir, 'admission-hook.yaml'), 'utf8')).map((d) => d.toJS() as { kind: string; rules?: Array<{ verbs: string[] }> }).find((d) => d.kind === 'Role');
      expect(role?.rules?.flatMap((rule) => rule.verbs)).toEqual(expect.arrayContaining(['update', 'patch']));
    }
    expect(kinds('function.yaml')).toEqual(['Deployment', 'Service']);
    let command: [string, string[]];
    if (language === 'python') {
      const { stderr } = await exec('python3', ['-m', 'unittest', '-v'], { cwd: dir, env: { ...process.env, PYTHONPATH: '' } });
      expect(stderr).toMatch(/test_answers_every_recorded_fixture_as_recorded[\s\S]*\nOK/);
      command = ['python3', [join(dir, 'function.py')]];
    } else {
      const { stdout } = await exec('go', ['test', '-count=1', '-v', './...'], { cwd: dir, env: GO_ENV });
      expect(stdout).toContain('--- PASS: TestAnswersEveryRecordedFixtureAsRecorded');
      await exec('go', ['build', '-o', join(dir, 'function'), '.'], { cwd: dir, env: GO_ENV });
      command = [join(dir, 'function'), []];
    }
    const secret = generateSigningSecret();
    const sample = await startSample(command[0], command[1], { KUBELOOP_SIGNING_SECRET: secret, PYTHONPATH: '' });
    running.push(sample);
    const { code, output } = await captureCommand(conformance, [`${sample.url}admit`, '--fixtures', join(dir, 'fixtures'), '--signing-secret', secret]);
    expect(output).toMatch(/ 0 failed/);
    expect(code, output).toBe(0);
  }, 300_000);

  it('refuses an unknown language as a usage error', async () => {
    expect((await captureCommand(init, [join(workDir, 'x'), '--language', 'rust'])).output).toContain('--language "rust": want typescript (the default), python or go');
    expect((await captureCommand(init, [join(workDir, 'y'), '--language', 'rust'])).code).toBe(2);
  });
});

describe('the npm package', () => {
  it('ships schemas/, docs/ (the scaffolds point at them) and the Python and Go SDKs without their tests, and says where it comes from', async () => {
    const { stdout } = await exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { maxBuffer: 16 * 1024 * 1024 });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(expect.arrayContaining(['docs/writing-a-function.md', 'docs/tenants.md', 'docs/sdks.md', 'docs/contract.md', 'README.md']));
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { repository?: { url?: string }; homepage?: string };
    expect(manifest.repository?.url).toMatch(/github\.com\/kubeloop\/kubeloop/);
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(files).toEqual(expect.arrayContaining(['schemas/reconcile-request.json', 'schemas/admission-response.json', 'sdk/python/pyproject.toml', 'sdk/python/kubeloop/server.py', 'sdk/python/kubeloop/schemas/reconcile-response.json', 'sdk/go/go.mod', 'sdk/go/handler.go', 'sdk/go/schemas/reconcile-request.json']));
    expect(files.filter((f) => f.startsWith('sdk/') && (/_test\.go$|\/tests\/|__pycache__/.test(f)))).toEqual([]);
  }, 60_000);
});
