// Polls a condition against the cluster until it holds: the e2e suites' name for kubeloop/testing's waitUntil
// (one implementation, shipped to users' tests), with the suites' shorter bound and faster polling.
import { waitUntil } from '../../cli/testing/wait-until.ts';

/**
 * Calls probe until it returns a value other than undefined/false and returns that value. Errors thrown by
 * probe count as "not yet" (the object may not exist yet); the last one is reported on timeout.
 */
export function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  return waitUntil(what, probe, timeoutMs, 150);
}
