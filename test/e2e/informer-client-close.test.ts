// An informer on the real API server whose KubeClient is closed or destroyed ends its loop instead of retrying forever
// (every attempt would fail at once with KubeClientClosedError, a warning each): one info line, no request after it,
// waitForSync() rejects saying why, stop() resolves. lib/kube/informer-close.test.ts has the decisions' cases.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { KubeClient, KubeClientClosedError, type KubeRequest } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

let suite: ClusterSuite;
let writer: KubeClient;
let resource: ResourceInfo;
const ENDED = 'KubeClient closed; informer stopped';

beforeAll(async () => {
  suite = await setupClusterSuite('informer-client-close');
  writer = await KubeClient.fromKubeConfig(suite.kubeConfig);
  resource = await new ResourceDiscovery(writer).resolve('v1', 'ConfigMap');
  await writer.request({ method: 'POST', path: `/api/v1/namespaces/${suite.namespace}/configmaps`, body: { metadata: { name: 'kept', labels: { t: 'close' } }, data: { v: '1' } } });
});
afterAll(async () => {
  await writer?.close();
  await suite?.cleanup();
});

/**
 * An informer on a client of its own, every list and watch it asks for counted (a request the closed client refuses
 * never reaches the server, so only the client's callers can count it), its log lines and handler events kept.
 */
async function informerOnOwnClient() {
  const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  const attempts: string[] = [];
  const counted = {
    serverKey: client.serverKey,
    requestText: (request: KubeRequest) => (attempts.push('list'), client.requestText(request)),
    streamResponse: (request: KubeRequest) => (attempts.push('watch'), client.streamResponse(request)),
  } as unknown as KubeClient;
  const logs: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
  // A short backoff: an informer that retried would try many times while the test waits.
  const informer = new Informer<V1ConfigMap>({ client: counted, resource, namespace: suite.namespace, labelSelector: 't=close', logger, backoff: { baseMs: 50, maxMs: 50, jitter: 0 } });
  const events: string[] = [];
  for (const event of ['add', 'update', 'delete', 'restart', 'synced', 'watching'] as const) informer.on(event, () => void events.push(event));
  const ended = () => logs.filter((l) => l.msg === ENDED).length;
  return { client, informer, attempts, logs, events, ended };
}

describe('Informer whose KubeClient is closed, on the real API server', () => {
  it.each(['close', 'destroy'] as const)('%s() with its watch open: the loop ends, no request after it, the cache and hasSynced stay, no handler hears more', async (how) => {
    const s = await informerOnOwnClient();
    s.informer.start();
    await s.informer.waitForSync();
    await eventually('the watch open', async () => s.events.includes('watching'));
    s.events.length = 0;
    await (how === 'close' ? s.client.close() : s.client.destroy());
    await eventually('the informer ended', async () => s.ended() > 0);
    const asked = s.attempts.length;
    // Forty backoff periods: an informer still running would have asked again (and warned) many times.
    await sleep(2000);
    expect(s.attempts).toHaveLength(asked);
    expect(s.ended()).toBe(1);
    expect(s.logs.filter((l) => l.level >= 40)).toEqual([]);
    expect([s.informer.hasSynced, [...s.informer.store.keys()], s.informer.restarts, s.events]).toEqual([true, [`${suite.namespace}/kept`], 0, []]);
    await s.informer.waitForSync();
    await s.informer.stop();
  });

  it('closed before it synced: waitForSync() rejects saying the client was closed, after one request, and stop() resolves', async () => {
    const s = await informerOnOwnClient();
    s.informer.start();
    let outcome: unknown = 'pending';
    s.informer.waitForSync().then(() => (outcome = 'synced'), (error: unknown) => (outcome = error));
    await s.client.close();
    await eventually('waitForSync settled', async () => outcome !== 'pending');
    expect(outcome).toMatchObject({ message: `informer ${s.informer.name} stopped before it synced: its KubeClient was closed` });
    expect((outcome as Error).cause).toBeInstanceOf(KubeClientClosedError);
    await sleep(2000);
    // Its first request (a WatchList, or a list), refused unsent; nothing after it.
    expect(s.attempts).toHaveLength(1);
    expect([s.ended(), s.informer.hasSynced, s.informer.restarts, s.events]).toEqual([1, false, 0, []]);
    await s.informer.stop();
  });
});
