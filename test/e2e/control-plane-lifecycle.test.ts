// Lifecycle of private control planes: restarting the API server keeps the data and the address, and
// an interrupted or exiting parent leaves no process and no temp dir behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { pidAlive, startControlPlane } from '../../cli/cluster/index.ts';
import { eventually } from '../cluster/eventually.ts';

const CHILD = fileURLToPath(new URL('../cluster/start-and-wait.ts', import.meta.url));

describe('a private control plane', () => {
  it('restarts kube-apiserver on the same address and keeps what etcd holds', async () => {
    const plane = await startControlPlane({ nodes: 1 });
    try {
      const core = plane.kubeConfig().makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'survivor' }, data: { a: '1' } } });
      const before = plane.pids()['kube-apiserver'];
      await plane.restartApiServer();
      expect(plane.pids()['kube-apiserver']).not.toBe(before);
      const cm = await core.readNamespacedConfigMap({ name: 'survivor', namespace: 'default' });
      expect(cm.data).toEqual({ a: '1' });
    } finally {
      await plane.stop();
    }
    expect(existsSync(plane.dir)).toBe(false);
  });

  // SIGTERM and SIGHUP take the same handler as SIGINT (checked by hand; each case costs a start).
  // SIGKILL runs no handler at all: the orphan reaper cleans up.
  it.each([
    ['SIGINT', 130],
    ['SIGKILL', 137],
    ['exit', 3],
  ] as const)('leaves no process and no temp dir when the parent ends by %s', async (how, expectedCode) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...(how === 'exit' ? ['exit'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + constants.signals[signal] : null))),
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', () => reject(new Error('child exited before the control plane was up')));
    });
    const { dir, pids } = JSON.parse(line) as { dir: string; pids: Record<string, number> };
    expect(Object.keys(pids).sort()).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']);
    if (how !== 'exit') child.kill(how);
    expect(await exited).toBe(expectedCode);
    await eventually('all control-plane processes gone', async () => Object.values(pids).every((pid) => !pidAlive(pid)), 10_000);
    await eventually('temp dir removed', async () => !existsSync(dir), 10_000);
  });
});
