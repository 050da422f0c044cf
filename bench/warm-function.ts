// Untimed calls to bench:router's function process before a side of section (0) is measured, so that no side
// meets a function colder than another's (its JIT, idle since the last side): the calls the router makes, one
// alone and batches of four (CloudEvents), through the router's own invoker, a recorded pod request each.
import { readFileSync } from 'node:fs';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { createHttpInvoker, type DispatchResult } from '../router/index.ts';

const FIXTURE = new URL('../test/fixtures/pod-name-label/adds-label-to-annotated-pod.json', import.meta.url);
const BATCH = 4;

/** `requests` HTTP requests to the function at `url`, `concurrency` at a time; throws on any reply but an answer. */
export async function warmFunction(url: string, requests: number, concurrency: number): Promise<void> {
  const recorded = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { request: ReconcileRequest }).request;
  const invoke = createHttpInvoker();
  let sent = 0;
  const request = (id: string): ReconcileRequest & { reconcileId: string } => ({
    ...recorded,
    reconcileId: `warm-up-${id}`,
    object: { ...recorded.object, metadata: { ...recorded.object.metadata, name: `warm-up-${id}` } },
  });
  const check = (result: DispatchResult) => {
    if (result.kind !== 'ok') throw new Error(`warming the function at ${url}: ${result.kind} ${result.message}`);
  };
  const worker = async () => {
    for (let n = sent++; n < requests; n = sent++) {
      // As the router: every fourth request alone (a Loop's first wave goes so), the others batched.
      if (n % 4 === 0) check(await invoke(request(String(n)), { url, timeoutMs: 10_000 }));
      else {
        const outcome = await invoke.batch!(Array.from({ length: BATCH }, (_, i) => ({ request: request(`${n}.${i}`) })), { url, timeoutMs: 10_000 });
        if (!Array.isArray(outcome)) throw new Error(`warming the function at ${url}: a batch refused (${JSON.stringify(outcome)})`);
        outcome.forEach(check);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await invoke.close();
  }
}
