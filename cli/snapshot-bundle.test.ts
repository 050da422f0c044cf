// The router's startup snapshot build (cli/snapshot-bundle.js, cli/build-snapshot.js) on small stand-in commands:
// a process started from a snapshot runs its command with Node's network modules, and what the build refuses.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routerSnapshotEntry, snapshotBundleOptions } from './snapshot-bundle.js';

const run = promisify(execFile);
const BUILD_SNAPSHOT = fileURLToPath(new URL('./build-snapshot.js', import.meta.url));
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-snapshot-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A command module as cli/commands/router.ts is one: `--help` prints a usage line, as build-snapshot.js checks. */
const command = (load: string, body: string) => `${load}
export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    console.log('usage: kubeloop router (a test command)');
    return 0;
  }
${body}
  return 0;
}
`;

/** Bundles `source` as the router's snapshot script would be, then runs cli/build-snapshot.js on it. */
async function buildSnapshot(name: string, source: string): Promise<{ dist: string; failure?: string }> {
  const dist = join(dir, name, 'dist');
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, name, 'command.ts'), source);
  await build({ stdin: routerSnapshotEntry(join(dir, name, 'command.ts')), ...snapshotBundleOptions(join(dist, 'bundle', 'router-snapshot.cjs')) });
  try {
    await run(process.execPath, [BUILD_SNAPSHOT, dist]);
    return { dist };
  } catch (error) {
    return { dist, failure: (error as { stderr: string }).stderr };
  }
}

describe('a startup snapshot (cli/build-snapshot.js)', () => {
  it('starts its command with node:http, https, tls and http2 loaded on use, and fresh random UUIDs in every process', async () => {
    const { dist, failure } = await buildSnapshot(
      'network',
      command(
        `import http from 'node:http';\nimport { request } from 'node:https';\nimport * as tls from 'node:tls';\nimport { constants } from 'node:http2';\nimport { randomUUID } from 'node:crypto';\nconst notFound = http.STATUS_CODES[404];`,
        `  const server = http.createServer((_req, res) => res.end('served'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const body = await new Promise<string>((resolve) => http.get({ host: '127.0.0.1', port, path: '/' }, (res) => res.on('data', (d: Buffer) => resolve(d.toString()))));
  server.close();
  console.log(JSON.stringify({ notFound, body, uuid: randomUUID(), https: typeof request, tls: typeof tls.connect, status: constants.HTTP2_HEADER_STATUS, argv }));`,
      ),
    );
    expect(failure).toBeUndefined();
    const start = async () => JSON.parse((await run(process.execPath, ['--snapshot-blob', join(dist, 'bundle', 'router.blob'), 'router', '--flag'])).stdout) as Record<string, unknown>;
    const [first, second] = [await start(), await start()];
    expect(first).toMatchObject({ notFound: 'Not Found', body: 'served', https: 'function', tls: 'function', status: ':status', argv: ['--flag'] });
    expect(first.uuid).not.toBe(second.uuid);
    const made = JSON.parse(await readFile(join(dist, 'bundle', 'router.blob.json'), 'utf8')) as Record<string, string>;
    expect(made).toEqual({ node: process.version, arch: process.arch, platform: process.platform, script: join(dist, 'bundle', 'router-snapshot.cjs') });
    // Node keeps a blob's data in memory for the process's life: built without code cache (the bytecode of what ran
    // while building, a code cache of every Node built-in), this command's blob is 2.6 MiB instead of 7.1.
    expect((await stat(join(dist, 'bundle', 'router.blob'))).size).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);

  it('builds when a module makes and drops a diagnostics channel while loading (V8 aborted on its pending finalizer)', async () => {
    const { dist, failure } = await buildSnapshot(
      'dropped-channel',
      command(`import diagnostics from 'node:diagnostics_channel';\ndiagnostics.channel('made-and-dropped');\ndiagnostics.tracingChannel('traced-and-dropped');`, `  console.log(diagnostics.channel('after-restore').name);`),
    );
    expect(failure).toBeUndefined();
    const { stdout } = await run(process.execPath, ['--snapshot-blob', join(dist, 'bundle', 'router.blob'), 'router']);
    expect(stdout.trim()).toBe('after-restore');
  }, 120_000);

  it('refuses a module that calls crypto.randomUUID() while it loads: every process would repeat the batch it cached', async () => {
    const { failure } = await buildSnapshot('uuid', command(`import { randomUUID } from 'node:crypto';\nconst id = randomUUID();`, '  console.log(id);'));
    expect(failure).toContain('crypto.randomUUID() called while the startup snapshot is built');
  }, 120_000);

  it('refuses a class of a network module kept while loading until it is judged (ALLOWED_STAND_INS)', async () => {
    const { failure } = await buildSnapshot('stand-in', command(`import { Agent } from 'node:http';\nconst kept = [Agent];`, '  console.log(kept.length);'));
    expect(failure).toContain('kept as stand-ins: http.Agent');
  }, 120_000);

  it('refuses to run any command but the router', async () => {
    const { dist } = await buildSnapshot('other-command', command('', ''));
    const failed = await run(process.execPath, ['--snapshot-blob', join(dist, 'bundle', 'router.blob'), 'webhook']).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain('this snapshot runs "router" only, not "webhook"');
  }, 120_000);
});
