// `kubeloop router` as a real process: a stop asked for while it is still connecting ends it cleanly; its ops
// server answers health (and not ready) meanwhile; an API server that never answers ends it with exit code 1 in
// bounded time; a bad --loops file ends it with 2.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../test/cluster/eventually.ts';

const BIN = fileURLToPath(new URL('../bin.js', import.meta.url));

describe('kubeloop router', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-router-cli-'));
  const sockets = new Set<Socket>();
  // An API server that accepts connections and never answers: the router stays in start-up.
  const silent = createServer((socket) => sockets.add(socket));
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 on SIGTERM while it is still connecting to the API server', async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${address.port}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [BIN, 'router', '--kubeconfig', kubeconfig, '--port', '0', '--host', '127.0.0.1'], {
      env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Wait until the router has reached the API server (it is now blocked in start-up), then stop it.
    while (sockets.size === 0) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('answers /healthz and /readyz (not ready) on its ops server while it connects, and stops on SIGTERM', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    // The silent API server of the test above, listening by now; a free port for the ops server.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const bound = probe.address();
        probe.close(() => resolve(bound !== null && typeof bound !== 'string' ? bound.port : 0));
      });
    });
    const child = spawn(process.execPath, [BIN, 'router', '--kubeconfig', kubeconfig, '--port', String(port), '--host', '127.0.0.1'], {
      env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const ops = `http://127.0.0.1:${port}`;
    const health = await eventually('the ops server answers /healthz', () => fetch(`${ops}/healthz`).catch(() => undefined));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not ready' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exits 1, its ops server closed, when the API server does not answer within --api-timeout-seconds', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(process.execPath, [BIN, 'router', '--kubeconfig', kubeconfig, '--api-timeout-seconds', '1', '--port', '0', '--host', '127.0.0.1'], {
      env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The process ending at all shows nothing (the ops server included) is left holding it open.
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    expect(stderr).toMatch(/the API server at https:\/\/127\.0\.0\.1:\d+ did not answer within 1 s \(last: no answer\)/);
  });

  it('exits 2 with the document and field named when the --loops file is bad, before it connects', async () => {
    const loops = join(dir, 'loops.yaml');
    writeFileSync(loops, 'kind: ClusterLoop\nmetadata: { name: a }\nspec: { for: { apiVersion: v1, kind: Pod } }\n');
    const child = spawn(process.execPath, [BIN, 'router', '--kubeconfig', join(dir, 'missing'), '--loops', loops, '--port', '0', '--host', '127.0.0.1'], {
      env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(stderr).toContain(`kubeloop router: --loops: ${loops} document 1: Loop a: spec.function is required`);
    expect(code).toBe(2);
  });
});
