// One real node per machine: its addresses, interface name and kubelet port are fixed, and its kubelet tunes
// host-wide kernel settings. The lock file holds the holder's pid; a dead holder's lock is taken over.
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pidAlive } from '../pid-alive.ts';

export const MACHINE_LOCK_PATH = process.env.KUBELOOP_REAL_NODE_LOCK ?? '/run/lock/kubeloop-real-node.lock';

export class RealNodeLockedError extends Error {
  constructor(readonly holder: number) {
    super(`another real node runs on this machine (pid ${holder}, lock ${MACHINE_LOCK_PATH}); stop it first ("kubeloop cluster down" in its --dir, or kill ${holder})`);
  }
}

/** Takes the lock or throws RealNodeLockedError naming the live holder; returns the release function. */
export async function acquireMachineLock(path = MACHINE_LOCK_PATH): Promise<() => Promise<void>> {
  await mkdir(dirname(path), { recursive: true });
  for (;;) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await machineLockHolder(path);
      if (holder !== undefined) throw new RealNodeLockedError(holder);
      await rm(path, { force: true });
    }
  }
}

/** The live holder's pid, if any: lets `cluster up --real-node` refuse before starting a control plane. */
export async function machineLockHolder(path = MACHINE_LOCK_PATH): Promise<number | undefined> {
  const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
  return Number.isInteger(holder) && holder > 0 && pidAlive(holder) ? holder : undefined;
}
