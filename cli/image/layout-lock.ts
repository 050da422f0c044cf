// One build at a time writes an image layout and packs it: a build's index.json prunes every blob none of its own
// images refers to, which would be another build's, still being written or packed (a lock directory beside the
// layout through proper-lockfile: kept fresh while held, taken over once stale, so a killed build blocks nobody).
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { lock } from 'proper-lockfile';

/** How long a lock not kept fresh is held by a build that died; the holder refreshes it twice as often. */
const STALE_MS = 30_000;
const WAIT = { forever: true, minTimeout: 250, maxTimeout: 2000 };

/** Runs `work` holding `<layout>.lock`, waiting first (said once through `onProgress`) while another build holds it. */
export async function withLayoutLock<T>(layout: string, onProgress: (line: string) => void, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(layout), { recursive: true });
  let compromised: Error | undefined;
  const options = { realpath: false, stale: STALE_MS, onCompromised: (error: Error) => void (compromised = error) };
  const release = await lock(layout, options).catch(async (error: unknown) => {
    if ((error as { code?: string }).code !== 'ELOCKED') throw error;
    onProgress(`waiting for another build to finish with ${layout}`);
    return lock(layout, { ...options, retries: WAIT });
  });
  try {
    const result = await work();
    // Held by another build meanwhile (this process stalled past STALE_MS): what it wrote cannot be trusted.
    if (compromised) throw new Error(`another build took over ${layout} while this one ran (${compromised.message}): build again`);
    return result;
  } finally {
    if (!compromised) await release();
  }
}
