import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireMachineLock, machineLockHolder, RealNodeLockedError } from './machine-lock.ts';

describe('the machine-wide real node lock', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const lockPath = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'real-node-lock-'));
    dirs.push(dir);
    return join(dir, 'real-node.lock');
  };

  it('refuses a second holder and names the live holder pid', async () => {
    const path = await lockPath();
    const sleeper = spawn('sleep', ['30']);
    try {
      await writeFile(path, String(sleeper.pid));
      await expect(acquireMachineLock(path)).rejects.toThrow(RealNodeLockedError);
      await expect(acquireMachineLock(path)).rejects.toThrow(`pid ${sleeper.pid}`);
      expect(await machineLockHolder(path)).toBe(sleeper.pid);
    } finally {
      sleeper.kill();
    }
  });

  it('takes over the lock of a holder that died, and releases it', async () => {
    const path = await lockPath();
    await writeFile(path, '999999999');
    const release = await acquireMachineLock(path);
    expect((await readFile(path, 'utf8')).trim()).toBe(String(process.pid));
    await release();
    expect(await machineLockHolder(path)).toBeUndefined();
  });
});
