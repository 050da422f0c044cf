// When kubeloop dev starts its router from the startup snapshot, and when it falls back to cli/bin.js.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routerSnapshot, type SnapshotBuild } from './router-snapshot.ts';

const runtime = { version: 'v24.21.0', arch: 'x64', platform: 'linux' };
let dist = '';

beforeAll(async () => {
  dist = join(await mkdtemp(join(tmpdir(), 'kubeloop-router-snapshot-')), 'dist');
  await mkdir(join(dist, 'bundle'), { recursive: true });
});

afterAll(async () => {
  await rm(join(dist, '..'), { recursive: true, force: true });
});

async function made(about: Partial<SnapshotBuild> | undefined, blob = true): Promise<void> {
  await rm(join(dist, 'bundle', 'router.blob'), { force: true });
  await rm(join(dist, 'bundle', 'router.blob.json'), { force: true });
  if (blob) await writeFile(join(dist, 'bundle', 'router.blob'), 'blob');
  const script = join(dist, 'bundle', 'router-snapshot.cjs');
  if (about) await writeFile(join(dist, 'bundle', 'router.blob.json'), JSON.stringify({ node: 'v24.21.0', arch: 'x64', platform: 'linux', script, ...about }));
}

describe('routerSnapshot', () => {
  it('starts the router from a blob this Node made at this path', async () => {
    await made({});
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ nodeArgs: ['--snapshot-blob', join(dist, 'bundle', 'router.blob')] });
  });

  it('falls back to cli/bin.js when no blob was built', async () => {
    await made(undefined, false);
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ why: expect.stringContaining('npm run build makes it') });
  });

  it('falls back when another Node version, platform or path made it (Node would refuse it, or its paths would be wrong)', async () => {
    await made({ node: 'v24.20.0' });
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ why: expect.stringContaining('made by Node v24.20.0, this is Node v24.21.0') });
    await made({ arch: 'arm64' });
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ why: expect.stringContaining('made for linux/arm64') });
    await made({ script: '/elsewhere/dist/bundle/router-snapshot.cjs' });
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ why: expect.stringContaining('made from /elsewhere/') });
  });

  it('falls back when the description is unreadable, or when the environment turns bundles or the snapshot off', async () => {
    await made({});
    await writeFile(join(dist, 'bundle', 'router.blob.json'), '{');
    expect(routerSnapshot(dist, {}, runtime)).toEqual({ why: expect.stringContaining('is unreadable') });
    await made({});
    for (const env of [{ KUBELOOP_NO_SNAPSHOT: '1' }, { KUBELOOP_NO_BUNDLE: '1' }, { KUBELOOP_FROM_SOURCE: '1' }]) {
      expect(routerSnapshot(dist, env, runtime)).toEqual({ why: 'turned off by the environment' });
    }
  });
});
