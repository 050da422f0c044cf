// Polls a condition against the cluster until it holds, failing with the last observed value.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Calls probe until it returns a value other than undefined/false and returns that value. Errors
 * thrown by probe count as "not yet" (the object may not exist yet) and are reported on timeout.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = 'never probed';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = String(value);
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what} (last: ${last})`);
    await sleep(150);
  }
}
