// The fetch handler on a runtime that is not Node: workerd (Cloudflare Workers' runtime, from the npm
// registry), which refuses code generation from strings as Workers do. pod-name-label is bundled with
// esbuild, served on 127.0.0.1, and every recorded case is replayed against it over HTTP. A second worker
// holds a signing key (a secret binding) and checks and signs calls with Web Crypto.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../cli/cluster/free-port.ts';
import { generateSigningSecret, parseSigningSecret, parseSigningSecrets, signRequest, verifyReply } from '../../lib/signing/webhook-signature.ts';
import { formatDifferences, loadFixtures, replayFixture, type Fixture, type ReplayMode, type ReplayResult } from '../../lib/replay/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { bundlePortable } from './portable-bundle.ts';

const WORKER = fileURLToPath(new URL('./workerd/pod-name-label-worker.ts', import.meta.url));
const SIGNED_WORKER = fileURLToPath(new URL('./workerd/signed-pod-name-label-worker.ts', import.meta.url));
// Mid-rotation: the worker holds the new and the old key.
const OLD_SECRET = generateSigningSecret();
const NEW_SECRET = generateSigningSecret();
const FIXTURES = fileURLToPath(new URL('../fixtures/pod-name-label/', import.meta.url));
const CODEGEN_PROBE_PATH = '/__probe/codegen'; // served by the worker entry
const WORKERD = createRequire(import.meta.url).resolve('workerd/bin/workerd');

const cases = loadFixtures(FIXTURES).map((loaded) => {
  if (!loaded.ok) throw new Error(`${loaded.file}: ${loaded.error}`);
  return [loaded.name, loaded.fixture] as const;
});

function config(port: number, signedPort: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .podNameLabel), (name = "signed", worker = .signedPodNameLabel)],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "main"),
    (name = "signed", address = "127.0.0.1:${signedPort}", http = (), service = "signed"),
  ],
);
const podNameLabel :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-09-01",
);
const signedPodNameLabel :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "signed-worker.js")],
  bindings = [(name = "KUBELOOP_SIGNING_SECRET", text = "${NEW_SECRET} ${OLD_SECRET}")],
  compatibilityDate = "2025-09-01",
);
`;
}

let dir: string;
let workerd: ChildProcess;
let base: string;
let signedBase: string;
let stderr = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-workerd-'));
  writeFileSync(join(dir, 'worker.js'), (await bundlePortable(WORKER)).code);
  writeFileSync(join(dir, 'signed-worker.js'), (await bundlePortable(SIGNED_WORKER)).code);
  const port = await freePort();
  const signedPort = await freePort();
  signedBase = `http://127.0.0.1:${signedPort}`;
  writeFileSync(join(dir, 'config.capnp'), config(port, signedPort));
  workerd = spawn(WORKERD, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'inherit', 'pipe'] });
  workerd.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  base = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_resolve, reject) =>
    workerd.once('exit', (code) => reject(new Error(`workerd exited (${code}) before serving:\n${stderr}`))),
  );
  exited.catch(() => {});
  await Promise.race([
    exited,
    eventually(`workerd serving on ${base}`, async () => {
      const reply = await request(`${base}/healthz`).catch(() => undefined);
      await reply?.body.dump();
      return reply?.statusCode === 200;
    }),
  ]);
}, 120_000);

afterAll(async () => {
  if (workerd && workerd.exitCode === null) {
    const exited = new Promise((resolve) => workerd.once('exit', resolve));
    workerd.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function explain(result: ReplayResult): string {
  if (result.outcome === 'error') return `${result.message}\n${stderr}`;
  return result.outcome === 'mismatch' ? formatDifferences(result.differences) : '';
}

describe('pod-name-label as a fetch handler on workerd', () => {
  it('runs where code generation from strings is refused', async () => {
    const reply = await request(`${base}${CODEGEN_PROBE_PATH}`);
    expect(await reply.body.text()).toMatch(/^refused: .*[Cc]ode generation from strings disallowed/);
  });

  it.each(cases.flatMap(([name, fixture]) => (['json', 'binary', 'structured'] as ReplayMode[]).map((mode) => [name, mode, fixture] as const)))(
    'replays %s (%s)',
    async (_name, mode, fixture: Fixture) => {
      const result = await replayFixture(fixture, { url: `${base}/`, mode, strict: true });
      expect(result.outcome, explain(result)).toBe('pass');
    },
  );

  it('rejects an invalid request with the precompiled validator message', async () => {
    const reply = await request(`${base}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', now: 'yesterday' }) });
    expect(reply.statusCode).toBe(400);
    const body = (await reply.body.json()) as { code: string; message: string };
    expect(body.code).toBe('InvalidRequest');
    expect(body.message).toContain("(root) must have required property 'loop'");
  });
});

describe('a signed pod-name-label on workerd (Web Crypto, both keys of a rotation)', () => {
  const [fixture] = cases[0]!.slice(1) as [Fixture];
  const body = JSON.stringify(fixture.request);
  const post = (headers: Record<string, string>, sent = body) => request(`${signedBase}/`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: sent });
  const both = parseSigningSecrets(`${NEW_SECRET} ${OLD_SECRET}`);

  it.each([
    ['the new key', NEW_SECRET],
    ['the old key', OLD_SECRET],
  ])('answers a request signed with %s, its reply signed with the same webhook-id by both keys', async (_case, secret) => {
    const headers = signRequest(parseSigningSecret(secret), 'loop/workerd', body);
    const reply = await post(headers);
    const text = await reply.body.text();
    expect(reply.statusCode, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ kind: 'ReconcileResponse', actions: expect.any(Array) });
    const replyHeaders = reply.headers as Record<string, string>;
    expect(replyHeaders['webhook-id']).toBe(headers['webhook-id']);
    for (const key of both) expect(verifyReply(key, 'loop/workerd', headers['webhook-id'], replyHeaders, text)).toEqual({ ok: true, id: headers['webhook-id'] });
  });

  it.each([
    ['an unsigned request', () => ({}), body, /missing/],
    ['a request signed with another key', () => signRequest(parseSigningSecret(generateSigningSecret()), 'loop/workerd', body), body, /no webhook-signature matches/],
    ['a tampered body', () => signRequest(parseSigningSecret(NEW_SECRET), 'loop/workerd', body), body.replace('"metadata"', '"metadata" '), /no webhook-signature matches/],
    ['a replayed request signed 6 minutes ago', () => signRequest(parseSigningSecret(NEW_SECRET), 'loop/workerd', body, { nowMs: Date.now() - 6 * 60_000 }), body, /stale or replayed/],
  ])('refuses %s with an unsigned 401 (no signing oracle)', async (_case, headersOf, sent, message) => {
    const reply = await post(headersOf(), sent);
    const text = await reply.body.text();
    expect(reply.statusCode, text).toBe(401);
    expect(JSON.parse(text)).toMatchObject({ code: 'InvalidSignature', message: expect.stringMatching(message) });
    expect(reply.headers['webhook-signature']).toBeUndefined();
    expect(both).toHaveLength(2);
  });
});
