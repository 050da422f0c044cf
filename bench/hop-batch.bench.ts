// npm run bench:hop-batch: the function hop's CPU per pod by batch size, the router's HTTP invoker (router/reconcile/
// dispatch.ts) against the pod-name-label function in a child process, two requests in flight as the batcher sends
// them: what a larger batch could still save per pod (issue #37), a cost per request apart from a cost per item.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { childCpuMicros, spawnUntilUrl } from './autocannon-kit.ts';
import { stopChild } from './child-lifetime.ts';
import { createHttpInvoker } from '../router/index.ts';
import { reconcileRequest } from './node-floor-controller.ts';
import { mean } from './alternating-rounds.ts';

const SERVER = fileURLToPath(new URL('./function-bench-server.ts', import.meta.url));
const SIZES = (process.env.BENCH_BATCH_SIZES ?? '1,2,4,8,16,32,64').split(',').map(Number);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 4096);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT = 2;

/** A pod as a metadata-only Loop sends it, as the Node floor with the hop builds it. */
const podRequest = (i: number) =>
  reconcileRequest({ name: `bench-${i}`, namespace: 'bench', uid: randomUUID(), resourceVersion: String(1000 + i), labels: { app: 'bench' }, annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } }, new Date());

async function main(): Promise<void> {
  const { url, child } = await spawnUntilUrl([SERVER, 'function', 'pod-name-label'], { ipc: true });
  const invoke = createHttpInvoker();
  const options = { url, timeoutMs: 10_000 };
  /** Sends ITEMS requests in batches of `size`, IN_FLIGHT at once; every item must be answered with a patch. */
  const send = async (size: number, items: number) => {
    let next = 0;
    const worker = async () => {
      while (next < items) {
        const batch = Array.from({ length: Math.min(size, items - next) }, () => podRequest(next++));
        const results = batch.length === 1 ? [await invoke(batch[0]!, options)] : await invoke.batch!(batch.map((request) => ({ request })), options);
        if (!Array.isArray(results) || results.some((r) => r.kind !== 'ok' || r.response.actions?.[0]?.op !== 'patch')) throw new Error(`batch of ${size}: ${JSON.stringify(results).slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  };
  try {
    const perItem = new Map<number, { caller: number[]; fn: number[] }>(SIZES.map((size) => [size, { caller: [], fn: [] }]));
    await send(16, 2000);
    for (let round = 0; round < ROUNDS; round++) {
      // Sizes alternate direction by round, so neither end always runs on a warmer process.
      for (const size of round % 2 === 0 ? SIZES : [...SIZES].reverse()) {
        // Untimed first: each size's own path (a single call is not a batch's) warmed before it is timed.
        await send(size, Math.min(ITEMS, Math.max(1024, size * 64)));
        const [cpu, fnBefore] = [process.cpuUsage(), await childCpuMicros(child)];
        await send(size, ITEMS);
        const caller = process.cpuUsage(cpu);
        const fn = (await childCpuMicros(child)) - fnBefore;
        perItem.get(size)!.caller.push((caller.user + caller.system) / ITEMS);
        perItem.get(size)!.fn.push(fn / ITEMS);
      }
    }
    const total = (size: number) => mean(perItem.get(size)!.caller) + mean(perItem.get(size)!.fn);
    console.log(`the function hop by batch size: ${ITEMS} pods a size and round, ${ROUNDS} rounds, ${IN_FLIGHT} requests in flight; CPU us per pod`);
    for (const size of SIZES) {
      const { caller, fn } = perItem.get(size)!;
      console.log(`  batch ${String(size).padStart(2)}: router ${mean(caller).toFixed(0).padStart(4)} + function ${mean(fn).toFixed(0).padStart(4)} = ${total(size).toFixed(0).padStart(4)} us (${(total(size) / total(SIZES[0]!)).toFixed(2)}x of batch ${SIZES[0]}; rounds ${caller.map((c, i) => (c + fn[i]!).toFixed(0)).join(', ')})`);
    }
    // total(size) = item + request / size, from the smallest and the largest size.
    const [small, large] = [SIZES[0]!, SIZES[SIZES.length - 1]!];
    const request = (total(small) - total(large)) / (1 / small - 1 / large);
    console.log(`  fitted from batch ${small} and ${large}: ${request.toFixed(0)} us a request, ${(total(large) - request / large).toFixed(0)} us an item`);
  } finally {
    await invoke.close();
    await stopChild(child);
  }
}

await main();
