// Two builds into one layout at once, as two `kubeloop image build`s or CI beside a test would run them: the second
// waits until the first has packed, so neither prunes the other's blobs; a lock left by a build that died is taken over.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withLayoutLock } from './layout-lock.ts';
import { createLayout, packOciArchive, putImage, putLayer, writeIndex } from './oci-image.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'layout-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A one-image build of a layer holding `content`, packed into `<name>.tar`; `between` runs after its blobs are written. */
async function build(layout: string, name: string, content: string, between: () => Promise<void> = async () => {}): Promise<string[]> {
  const files = join(dir, `files-${name}`);
  await mkdir(files, { recursive: true });
  await writeFile(join(files, 'content'), content);
  await createLayout(layout);
  const layer = await putLayer(layout, files);
  const manifest = await putImage(layout, { name: `example/${name}:1`, layers: [layer], config: {} });
  await between();
  await writeIndex(layout, [manifest]);
  const archive = join(dir, `${name}.tar`);
  await packOciArchive(layout, archive);
  const { stdout } = await promisify(execFile)('tar', ['-tf', archive]);
  return stdout.split('\n').filter((line) => line.startsWith('blobs/sha256/') && line.length > 'blobs/sha256/'.length);
}

describe('withLayoutLock', () => {
  it('makes a second build wait until the first has packed: each archive holds its own blobs', async () => {
    const layout = join(dir, 'layout');
    const order: string[] = [];
    const waits: string[] = [];
    let firstWrote = (): void => {};
    let letFirstFinish = (): void => {};
    const wrote = new Promise<void>((resolve) => (firstWrote = resolve));
    const holding = async () => {
      order.push('first wrote its blobs');
      firstWrote();
      await new Promise<void>((resolve) => (letFirstFinish = resolve));
    };
    const first = withLayoutLock(layout, () => {}, async () => {
      const blobs = await build(layout, 'first', 'one', holding);
      order.push('first packed');
      return blobs;
    });
    await wrote;
    // Unlocked, this build's index would prune the first one's layer before the first packed it.
    const second = withLayoutLock(layout, (line) => waits.push(line), async () => {
      order.push('second started');
      return build(layout, 'second', 'two');
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(waits).toEqual([`waiting for another build to finish with ${layout}`]);
    letFirstFinish();
    const archives = await Promise.all([first, second]);
    expect(order).toEqual(['first wrote its blobs', 'first packed', 'second started']);
    // Its config, manifest and layer each.
    expect(archives.map((blobs) => blobs.length)).toEqual([3, 3]);
  });

  it('takes over the lock of a build that died, without waiting for it', async () => {
    const layout = join(dir, 'layout');
    await mkdir(`${layout}.lock`, { recursive: true });
    const longAgo = new Date(Date.now() - 120_000);
    await utimes(`${layout}.lock`, longAgo, longAgo);
    const waits: string[] = [];
    const blobs = await withLayoutLock(layout, (line) => waits.push(line), () => build(layout, 'after', 'three'));
    expect([waits, blobs.length]).toEqual([[], 3]);
  });
});
