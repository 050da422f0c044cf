// The Python and Go SDKs (sdk/python, sdk/go) kept green by `npm test`: their own test suites (the Go one
// with the drift test against schemas/), the samples built on them replaying the seed fixtures in-process,
// and each sample as a real process, signed, passing `kubeloop conformance` with those fixtures over HTTP.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { run as conformance } from '../../cli/commands/conformance.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { captureCommand } from './capture-console.ts';
import { buildGoSample, GO_ENV, GO_POD_NAME_LABEL_DIR, PYTHON_POD_NAME_LABEL, PYTHON_SDK_DIR, startSample, type RunningSample } from './sample-processes.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(REPO, 'test', 'fixtures', 'pod-name-label');
const exec = promisify(execFile);

/** Runs a test command; on failure the assertion shows its whole output. */
async function passes(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
    return `${stdout}${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    expect.fail(`${command} ${args.join(' ')} in ${cwd} failed:\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`);
  }
}

const running: RunningSample[] = [];
afterAll(() => Promise.all(running.map((sample) => sample.stop())));

/**
 * SIGTERM as the kubelet sends it: /readyz turns 503 at once while calls are still served for the drain
 * delay (so endpoints stop routing here first), then the process exits 0.
 */
async function drainsOnSigterm(start: (env: Record<string, string>) => Promise<RunningSample>): Promise<void> {
  const sample = await start({ KUBELOOP_DRAIN_DELAY_SECONDS: '8' });
  running.push(sample);
  const exited = new Promise<number | null>((resolve) => sample.process.once('exit', (code) => resolve(code)));
  sample.process.kill('SIGTERM');
  await eventually('/readyz to answer 503', async () => (await request(new URL('/readyz', sample.url)).then(async (r) => (await r.body.dump(), r.statusCode))) === 503);
  const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 't', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, children: {}, now: '2026-01-01T00:00:00Z' });
  const served = await request(sample.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await served.body.dump();
  expect(served.statusCode).toBe(200);
  expect(await exited).toBe(0);
}

async function conformanceOf(sample: RunningSample, secret: string) {
  return captureCommand(conformance, [sample.url, '--fixtures', FIXTURES, '--signing-secret', secret]);
}

describe('sdk/python', () => {
  const env = { ...process.env, PYTHONPATH: PYTHON_SDK_DIR };

  it('passes its unit tests (python3 -m unittest)', async () => {
    expect(await passes('python3', ['-m', 'unittest', '-v'], PYTHON_SDK_DIR, env)).toMatch(/\nOK\b/);
  }, 60_000);

  it('runs the Python pod-name-label sample through every seed fixture in-process', async () => {
    expect(await passes('python3', ['-m', 'unittest', '-v'], join(REPO, 'samples', 'python', 'pod-name-label'), env)).toMatch(/\nOK\b/);
  }, 60_000);

  it('runs the Go config-reloader sample (related objects) through its recorded cases in-process', async () => {
    const output = await passes('go', ['test', '-count=1', '-v', './...'], join(REPO, 'samples', 'go', 'config-reloader'), GO_ENV);
    expect(output).toContain('--- PASS: TestAnswersEveryRecordedCase/rolls-when-config-map-changes');
    expect(output).toContain('--- PASS: TestConfigHashMatchesTypeScript');
  }, 300_000);

  it('serves the sample as a real process that passes kubeloop conformance, signed, with the fixtures', async () => {
    const secret = generateSigningSecret();
    const sample = await startSample('python3', [PYTHON_POD_NAME_LABEL], { KUBELOOP_SIGNING_SECRET: secret });
    running.push(sample);
    const { code, output } = await conformanceOf(sample, secret);
    expect(output).toMatch(/^cloudevents +CloudEvents batch: .* PASS +200, 3 items answered one by one \(advertises 64\)$/m);
    expect(output).toMatch(/36 passed, 0 failed, 0 skipped$/);
    expect(code).toBe(0);
  }, 60_000);

  it('drains on SIGTERM: /readyz 503, calls still served for the drain delay, exit 0', async () => {
    await drainsOnSigterm((env) => startSample('python3', [PYTHON_POD_NAME_LABEL], env));
  }, 60_000);

  it('serves an admission function (the require-label port) that passes its fixtures and conformance on POST /admit', async () => {
    const dir = join(REPO, 'samples', 'python', 'require-label');
    expect(await passes('python3', ['-m', 'unittest'], dir, env)).toMatch(/\nOK\b/);
    const sample = await startSample('python3', [join(dir, 'require_label.py')]);
    running.push(sample);
    const { code, output } = await captureCommand(conformance, [new URL('/admit', sample.url).toString(), '--fixtures', join(REPO, 'test', 'fixtures', 'require-label')]);
    expect(output).toMatch(/^PASS cloudevents +binary mode/m);
    expect(output).toMatch(/^PASS fixture +configmap-dry-run-without-team$/m);
    expect(output).toMatch(/18 passed, 0 failed, 12 skipped$/);
    expect(code).toBe(0);
  }, 60_000);
});

describe('sdk/go', () => {
  it('passes go test ./... (the drift test against schemas/ included), standard library only', async () => {
    const output = await passes('go', ['test', '-count=1', '-v', './...'], join(REPO, 'sdk', 'go'), GO_ENV);
    expect(output).toContain('--- PASS: TestGoTypesMatchTheSchemas');
    expect(output).toContain('--- PASS: TestRelatedNamed');
    expect(output).toMatch(/^ok\s+github\.com\/kubeloop\/kubeloop\/sdk\/go/m);
    const modules = await passes('go', ['list', '-m', 'all'], join(REPO, 'sdk', 'go'), GO_ENV);
    expect(modules.trim()).toBe('github.com/kubeloop/kubeloop/sdk/go');
    // gofmt'ed, SDK and samples alike (the repository's lint covers TypeScript only).
    expect(await passes('gofmt', ['-l', 'sdk/go', 'samples/go'], REPO, GO_ENV)).toBe('');
  }, 300_000);

  it('runs the Go pod-name-label sample through every seed fixture in-process', async () => {
    expect(await passes('go', ['test', '-count=1', './...'], GO_POD_NAME_LABEL_DIR, GO_ENV)).toMatch(/^ok\s/m);
  }, 300_000);

  it('serves the sample as a real process that passes kubeloop conformance, signed, with the fixtures', async () => {
    const secret = generateSigningSecret();
    const sample = await startSample(await buildGoSample(), [], { KUBELOOP_SIGNING_SECRET: secret });
    running.push(sample);
    const { code, output } = await conformanceOf(sample, secret);
    expect(output).toMatch(/^cloudevents +CloudEvents batch: .* PASS +200, 3 items answered one by one \(advertises 64\)$/m);
    expect(output).toMatch(/36 passed, 0 failed, 0 skipped$/);
    expect(code).toBe(0);
  }, 300_000);

  it('serves an admission function (the require-label port) that passes its fixtures and conformance on POST /admit', async () => {
    const dir = join(REPO, 'samples', 'go', 'require-label');
    expect(await passes('go', ['test', '-count=1', './...'], dir, GO_ENV)).toMatch(/^ok\s/m);
    const sample = await startSample(await buildGoSample(dir, 'require-label-go'), []);
    running.push(sample);
    const { code, output } = await captureCommand(conformance, [new URL('/admit', sample.url).toString(), '--fixtures', join(REPO, 'test', 'fixtures', 'require-label')]);
    expect(output).toMatch(/^PASS fixture +configmap-dry-run-without-team$/m);
    expect(output).toMatch(/18 passed, 0 failed, 12 skipped$/);
    expect(code).toBe(0);
  }, 300_000);

  it('drains on SIGTERM: /readyz 503, calls still served for the drain delay, exit 0', async () => {
    const binary = await buildGoSample();
    await drainsOnSigterm((env) => startSample(binary, [], env));
  }, 300_000);
});
