// `kubeloop function` as a real process: serves a registered function, reports bad settings by name,
// and drains and exits 0 on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { readFunctionConfig } from '../../lib/runtime/config.ts';

const BIN = fileURLToPath(new URL('../bin.js', import.meta.url));

function start(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'function', ...args], {
    env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, exited, lines, stderr: () => stderr };
}

const SDK = fileURLToPath(new URL('../../lib/sdk/index.ts', import.meta.url));
const modules = mkdtempSync(join(tmpdir(), 'kubeloop-function-module-'));
// As in a project made by `kubeloop init`: .ts files are ES modules.
writeFileSync(join(modules, 'package.json'), '{ "type": "module" }\n');
afterAll(() => rmSync(modules, { recursive: true, force: true }));

function writeModule(name: string, source: string): string {
  const file = join(modules, name);
  writeFileSync(file, source);
  return file;
}

function servedUrl(proc: ReturnType<typeof start>, name: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const serving = proc.lines.map((l) => JSON.parse(l) as { msg?: string; url?: string }).find((l) => l.msg === `serving function ${name}`);
      if (serving?.url) {
        clearInterval(timer);
        resolve(serving.url);
      }
    }, 50);
    void proc.exited.then(() => {
      clearInterval(timer);
      reject(new Error(`exited early: ${proc.stderr()}`));
    });
  });
}

async function reconcileOnce(url: string): Promise<unknown> {
  const body = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 't', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd' } }, children: {}, now: '2026-11-22T10:00:00Z' };
  const reply = await request(`${url}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(reply.statusCode).toBe(200);
  return reply.body.json();
}

describe('kubeloop function', () => {
  it('serves a TypeScript module whose default export is defineFunction(...)', async () => {
    const file = writeModule(
      'greeter.ts',
      `import { defineFunction, event, respond } from ${JSON.stringify(SDK)};\n` +
        `export default defineFunction({ name: 'greeter', reconcile: (r) => respond([event('Normal', 'Hello', \`hello \${r.object.metadata?.name ?? ''}\`)]) });\n`,
    );
    const proc = start([file, '--port', '0', '--host', '127.0.0.1']);
    const url = await servedUrl(proc, 'greeter');
    expect(await reconcileOnce(url)).toMatchObject({ actions: [{ op: 'event', reason: 'Hello', message: 'hello c' }] });
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });

  it('serves a plain JavaScript module given by a relative path', async () => {
    writeModule('plain.mjs', `export default { name: 'plain', reconcile: () => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] }) };\n`);
    const child = spawn(process.execPath, [BIN, 'function', './plain.mjs', '--port', '0', '--host', '127.0.0.1'], { cwd: modules, env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = { child, exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))), lines: [] as string[], stderr: () => '' };
    createInterface({ input: child.stdout }).on('line', (line) => proc.lines.push(line));
    const url = await servedUrl(proc, 'plain');
    expect(await reconcileOnce(url)).toMatchObject({ kind: 'ReconcileResponse', actions: [] });
    child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });

  it('refuses a module without a function definition as its default export with a usage error (exit 2)', async () => {
    const file = writeModule('not-a-function.mjs', 'export const reconcile = () => null;\n');
    const proc = start([file, '--port', '0']);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toMatch(/want a default export made with defineFunction\(\{ name, reconcile \}\) or defineAdmission.*found no default export/);
    expect(proc.stderr()).toContain('usage: kubeloop function <name|module>');
  });

  it('refuses a module whose function name is not a DNS label (exit 2)', async () => {
    const file = writeModule('bad-name.mjs', `export default { name: 'Bad_Name', reconcile: () => null };\n`);
    const proc = start([file, '--port', '0']);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toMatch(/function name "Bad_Name" must be a DNS label/);
  });

  it('serves a registered function and shuts down cleanly on SIGTERM', async () => {
    const proc = start(['pod-name-label', '--port', '0', '--host', '127.0.0.1']);
    const url = await servedUrl(proc, 'pod-name-label');
    const health = await request(`${url}/healthz`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.lines.some((l) => l.includes('"msg":"shutdown complete"'))).toBe(true);
  });

  it('exits 2 naming an unknown function and the known ones', async () => {
    const proc = start(['no-such-function', '--port', '0']);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toMatch(/unknown function "no-such-function": give a built-in name \(.*pod-name-label.*\) or a module path/);
  });
});

describe('readFunctionConfig', () => {
  it('takes flags over environment variables and applies defaults', () => {
    expect(readFunctionConfig(['podset', '--port', '9090'], { PORT: '1', KUBELOOP_BODY_LIMIT_BYTES: '2048' })).toEqual({
      name: 'podset',
      port: 9090,
      host: '0.0.0.0',
      bodyLimitBytes: 2048,
      logLevel: 'info',
      drainDelaySeconds: 0,
      tracing: { otlpHeaders: {}, samplingRatio: 1 },
    });
  });

  it('names the flag or variable that holds a bad value', () => {
    expect(() => readFunctionConfig(['podset', '--port', 'http'])).toThrow(/--port: "http" is not an integer between 0 and 65535/);
    expect(() => readFunctionConfig(['podset'], { KUBELOOP_BODY_LIMIT_BYTES: '10' })).toThrow(/KUBELOOP_BODY_LIMIT_BYTES: "10"/);
    expect(() => readFunctionConfig(['podset'], { KUBELOOP_LOG_LEVEL: 'chatty' })).toThrow(/KUBELOOP_LOG_LEVEL: invalid log level "chatty"/);
    expect(() => readFunctionConfig([])).toThrow(/missing the function name/);
    expect(() => readFunctionConfig(['podset'], { KUBELOOP_SIGNING_SECRET: 'whsec_short' })).toThrow(/KUBELOOP_SIGNING_SECRET is not "whsec_"/);
    expect(() => readFunctionConfig(['podset', '--signing-secret-file', '/no/such/file'])).toThrow(/--signing-secret-file: cannot read "\/no\/such\/file": ENOENT/);
  });

  it('reads the signing secret from a file before the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-secret-'));
    const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    writeFileSync(join(dir, 'key'), `${secret}\n`);
    const config = readFunctionConfig(['podset', '--signing-secret-file', join(dir, 'key')], { KUBELOOP_SIGNING_SECRET: 'whsec_ignored' });
    expect(config.signingSecret).toBe(secret);
    expect(readFunctionConfig(['podset'], { KUBELOOP_SIGNING_SECRET: secret }).signingSecret).toBe(secret);
  });
});
