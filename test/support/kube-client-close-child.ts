// Child process of test/e2e/kube-client-close.test.ts: one request to the real API server in flight while the
// KubeClient is closed or destroyed, in a process of its own, since what is at stake is whether the process survives.
// Prints one JSON line: how the request ended and whether close() resolved; an uncaught 'error' ends it first.
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http2';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeRequest } from '../../lib/kube/kube-client.ts';

export type CloseScenario = 'get' | 'watch' | 'write';
export interface CloseChildArgs {
  kubeconfig: string;
  namespace: string;
  scenario: CloseScenario;
  how: 'close' | 'destroy';
}
export interface CloseChildResult {
  /** The request's (or the watch body's) error: name, code, message; "answered" if it did not fail. */
  outcome: { name?: string; code?: string; message?: string; inFlight?: boolean } | 'answered';
  closed: boolean;
}

const { kubeconfig, namespace, scenario, how } = JSON.parse(process.argv[2] ?? '{}') as CloseChildArgs;
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfig);
const client = await KubeClient.fromKubeConfig(kubeConfig, { http2Writes: scenario === 'write' });
// Over an HTTP/2 connection already up, as a running process's requests are.
await client.request({ path: `/api/v1/namespaces/${namespace}` });

/** Resolves on the next message of a diagnostics channel that `accept` takes. */
function next(channel: string, accept: (message: unknown) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!accept(message)) return;
      resolve();
    };
    subscribe(channel, onMessage);
  });
}
const any = () => true;
const outcomeOf = (error: unknown): CloseChildResult['outcome'] => {
  const e = error as { name?: string; code?: string; message?: string; inFlight?: boolean };
  return { name: e.name, code: e.code, message: e.message, inFlight: e.inFlight };
};
const watch: KubeRequest = { path: `/api/v1/namespaces/${namespace}/configmaps`, query: { watch: true }, timeoutMs: 0 };

let ended: Promise<unknown>;
if (scenario === 'get') {
  // A GET whose answer never ends (a watch read whole): in flight until the client closes.
  const answered = next('undici:request:headers', any);
  ended = client.request(watch);
  await answered;
} else if (scenario === 'watch') {
  const body = await client.stream(watch);
  ended = (async () => {
    for await (const _ of body);
  })();
} else {
  // The first write opens the node:http2 session: closed on the next tick, it is still connecting.
  const sent = next('http2.client.stream.created', (m) => (m as { headers?: IncomingHttpHeaders }).headers?.[':method'] === 'POST');
  ended = client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/configmaps`, query: { dryRun: 'All' }, body: { metadata: { name: 'in-flight' } } });
  await sent;
}
const outcome = ended.then(() => 'answered' as const, outcomeOf);
let closed = false;
const closing = (how === 'close' ? client.close() : client.destroy()).then(() => (closed = true));
/** `promise`, or `otherwise` if it has not settled within `ms` (failure detection only, generous). */
async function within<T>(promise: Promise<T>, ms: number, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([promise, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(otherwise), ms)))]);
  clearTimeout(timer);
  return result;
}
// close() resolves at once when it works; before, an open watch held it for as long as the watch lasted.
await within(closing, 20_000, false);
const result: CloseChildResult = { outcome: await within(outcome, 10_000, { message: 'still in flight' }), closed };
process.stdout.write(`${JSON.stringify(result)}\n`);
