// Polling for kubeloop/testing/cluster: a cluster converges some time after a write, so a test waits for the
// state it expects, with a generous bound and an error that names what never happened.
import { setTimeout as sleep } from 'node:timers/promises';

/** An object's address: apiVersion and kind as in its YAML; namespace for namespaced kinds (default "default"). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/**
 * Calls `check` until it returns a value other than undefined and false, and returns that value. After timeoutMs
 * it throws "timed out after N s waiting for <what>", with the last error `check` threw as its cause.
 */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${why}`, lastError === undefined ? undefined : { cause: lastError });
    }
    await sleep(intervalMs);
  }
}
