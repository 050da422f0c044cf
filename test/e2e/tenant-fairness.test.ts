// The noisy neighbour on a real control plane: one tenant creates a couple of hundred objects at once and its
// function hangs (held by the test); the other tenant's objects keep converging under the router's shared
// cap on calls in flight, and the noisy tenant shows as throttled. No timing: the noisy calls never end
// until the quiet tenant has converged, so the order cannot flip on a slow machine.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Loop } from '../../api/loop.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { LOOP_SERVICE_ACCOUNT } from '../support/loop-service-account.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { closeServer } from '../support/close-server.ts';

const NOISY_OBJECTS = 200;
const QUIET_OBJECTS = 5;
/** 10 % of it stays reserved for a tenant with nothing in flight: the noisy tenant holds at most 9. */
const CAP = 10;

let quiet: RouterHarness;
let noisy: RouterHarness;
const held: ServerResponse[] = [];
let releaseAll = false;
const servers: Array<() => Promise<void>> = [];

/**
 * A function that labels the ConfigMap it is called for; with `hold`, it answers only once released (a namespace:
 * only the calls for that namespace's objects, a function two tenants share).
 */
async function labellingFunction(hold: boolean | string): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      const request = JSON.parse(body) as ReconcileRequest;
      const object = request.object;
      const answer = (r: ServerResponse) => {
        r.writeHead(200, { 'content-type': 'application/json' });
        r.end(JSON.stringify({
          apiVersion: 'kubeloop.dev/v1',
          kind: 'ReconcileResponse',
          actions: object?.metadata?.labels?.converged ? [] : [{
            op: 'patch',
            target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: object?.metadata?.namespace, name: object?.metadata?.name },
            patch: [{ op: 'test', path: '/metadata/resourceVersion', value: object?.metadata?.resourceVersion }, { op: 'add', path: '/metadata/labels/converged', value: 'true' }],
          }],
        }));
      };
      if ((hold === true || hold === object?.metadata?.namespace) && !releaseAll) {
        held.push(res);
        // A call the router gave up on (its timeout) is no longer in flight: only open calls count as held.
        req.socket.once('close', () => {
          const at = held.indexOf(res);
          if (at >= 0 && !res.writableEnded) held.splice(at, 1);
        });
      } else {
        answer(res);
      }
      (res as ServerResponse & { answer?: () => void }).answer = () => answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(() => closeServer(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** The longest a call may take: a held call that timed out would free its slot for another (it leaves `held`). */
const HELD_CALL_TIMEOUT_SECONDS = 60;

/** A namespaced Loop (a tenant's) on ConfigMaps of its own namespace, given inline to the router. */
function tenantLoop(name: string, namespace: string, url: string, maxConcurrency: number): Loop {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name, namespace, generation: 1 },
    spec: {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      selector: { matchLabels: { app: 'fairness' } },
      serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT },
      namespaces: [namespace],
      // Single calls, one per slot: the scheduler's shares are what this test counts, not batches.
      function: { url, maxConcurrency, timeoutSeconds: HELD_CALL_TIMEOUT_SECONDS, batch: { enabled: false } },
    },
  };
}

async function createConfigMaps(h: RouterHarness, count: number): Promise<void> {
  const namespace = h.suite.namespace;
  const names = Array.from({ length: count }, (_, i) => `cm-${i}`);
  // In parallel batches: "created at once" as a burst a real tenant would make.
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((name) => h.client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/configmaps`, body: { metadata: { name, labels: { app: 'fairness' } } } })));
  }
}

async function converged(h: RouterHarness): Promise<number> {
  const list = await h.client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${h.suite.namespace}/configmaps`, query: { labelSelector: 'app=fairness,converged=true' } });
  return list.items.length;
}

async function metric(router: Router, name: string, labels: string): Promise<number | undefined> {
  const text = await router.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
}

beforeAll(async () => {
  [quiet, noisy] = await Promise.all([routerHarness('tenant-fairness-quiet'), routerHarness('tenant-fairness-noisy')]);
  await installCrds(quiet.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml']);
});
afterAll(async () => {
  releaseAll = true;
  for (const res of held.splice(0)) (res as ServerResponse & { answer?: () => void }).answer?.();
  await quiet?.close();
  await noisy?.close();
  for (const close of servers) await close();
});

describe('fairness across tenants', () => {
  it("keeps a quiet tenant's objects converging while a noisy tenant's backlog waits on a hung function", async () => {
    const noisyUrl = await labellingFunction(true);
    const quietUrl = await labellingFunction(false);
    const router = await quiet.router([
      tenantLoop('noisy', noisy.suite.namespace, noisyUrl, 50),
      tenantLoop('quiet', quiet.suite.namespace, quietUrl, 8),
    ], { fairness: { maxCallsInFlight: CAP } });
    await router.waitForLoop(`${noisy.suite.namespace}/noisy`);
    await router.waitForLoop(`${quiet.suite.namespace}/quiet`);

    await createConfigMaps(noisy, NOISY_OBJECTS);
    // The noisy tenant fills every slot but the reserved one, and its function answers none of them.
    await eventually('the noisy function holds its calls', async () => held.length >= CAP - 1);

    await createConfigMaps(quiet, QUIET_OBJECTS);
    await eventually('every quiet object converged', async () => (await converged(quiet)) === QUIET_OBJECTS, 60_000);
    // Still busy: none of the noisy calls was answered, so none of its objects converged and its backlog waits.
    expect(await converged(noisy)).toBe(0);
    expect(held.length).toBe(CAP - 1);
    expect(await metric(router, 'kubeloop_tenant_calls_in_flight', `tenant="${noisy.suite.namespace}"`)).toBe(CAP - 1);
    expect(await metric(router, 'kubeloop_tenant_throttled_seconds_total', `tenant="${noisy.suite.namespace}",budget="calls"`)).toBeGreaterThan(0);

    // A cluster admin weighs the quiet tenant by its Namespace's label; the router follows it.
    await quiet.client.request({ method: 'PATCH', path: `/api/v1/namespaces/${quiet.suite.namespace}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { 'kubeloop.dev/tenant-weight': '3' } } } });
    await eventually('the quiet tenant weighs 3', async () => (await metric(router, 'kubeloop_tenant_weight', `tenant="${quiet.suite.namespace}"`)) === 3);

    // Released, the noisy tenant drains its whole backlog: the cap only shared the slots, it lost nothing.
    releaseAll = true;
    for (const res of held.splice(0)) (res as ServerResponse & { answer?: () => void }).answer?.();
    await eventually('every noisy object converged', async () => (await converged(noisy)) === NOISY_OBJECTS, 120_000);
    await router.stop();
  });

  it('shows a Loop held back by its share as Throttled (CallShare, with the cap), beside Ready, and clears it once it drains', async () => {
    const url = await labellingFunction(true);
    releaseAll = false;
    const namespace = noisy.suite.namespace;
    const list = await noisy.client.request<{ items: Array<{ metadata: { name: string } }> }>({ path: `/api/v1/namespaces/${namespace}/configmaps`, query: { labelSelector: 'app=fairness' } });
    await Promise.all(list.items.map((cm) => noisy.client.request({ method: 'PATCH', path: `/api/v1/namespaces/${namespace}/configmaps/${cm.metadata.name}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { converged: null } } } })));
    // A ClusterLoop object (the `cluster` tenant), so the router writes its status; 2 slots, no reserve left.
    const router = await noisy.router(undefined, { loopSelector: noisy.loopSelector, fairness: { maxCallsInFlight: 2, throttleWindowMs: 3000 } });
    await noisy.createLoop('throttled', {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      selector: { matchLabels: { app: 'fairness' } },
      serviceAccount: noisy.loopServiceAccount,
      namespaces: [namespace],
      function: { url, maxConcurrency: 8, timeoutSeconds: HELD_CALL_TIMEOUT_SECONDS, batch: { enabled: false } },
    });
    const conditions = async () => (await noisy.loopStatus('throttled')).loop.status?.conditions ?? [];
    const throttled = await eventually('Throttled=True', async () => (await conditions()).find((c) => c.type === 'Throttled' && c.status === 'True'), 60_000);
    expect(throttled.reason).toBe('CallShare');
    expect(throttled.message).toMatch(/waited \d+% of the last \d+s for a call slot: tenant _cluster's share \(weight 1\) of 2 calls in flight/);
    expect((await conditions()).find((c) => c.type === 'Ready')?.status).toBe('True');

    releaseAll = true;
    for (const res of held.splice(0)) (res as ServerResponse & { answer?: () => void }).answer?.();
    await eventually('every object converged again', async () => (await converged(noisy)) === NOISY_OBJECTS, 120_000);
    const cleared = await eventually('Throttled=False', async () => (await conditions()).find((c) => c.type === 'Throttled' && c.status === 'False'), 60_000);
    expect(cleared.reason).toBe('NotThrottled');
    expect((await conditions()).find((c) => c.type === 'Ready')?.status).toBe('True');
    await router.stop();
  });

  it("keeps a quiet tenant's calls to a function it shares with a noisy tenant from queueing behind the noisy tenant's hung calls", async () => {
    // One function for both tenants (a platform's shared one) that hangs on every noisy call. The noisy tenant's
    // two Loops may have 100 calls in flight, more than the 64 connections a function origin used to get: the calls
    // the fair scheduler admitted beyond them waited for a connection first come first served, the quiet ones too.
    const NOISY_IN_FLIGHT = 100;
    const url = await labellingFunction(noisy.suite.namespace);
    releaseAll = false;
    const unconverge = (h: RouterHarness) => Promise.all(Array.from({ length: h === noisy ? NOISY_OBJECTS : QUIET_OBJECTS }, (_, i) =>
      h.client.request({ method: 'PATCH', path: `/api/v1/namespaces/${h.suite.namespace}/configmaps/cm-${i}`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { converged: null } } } })));
    await unconverge(noisy);
    const router = await quiet.router([
      tenantLoop('noisy', noisy.suite.namespace, url, NOISY_IN_FLIGHT / 2),
      tenantLoop('noisy-2', noisy.suite.namespace, url, NOISY_IN_FLIGHT / 2),
      tenantLoop('quiet', quiet.suite.namespace, url, 8),
    ]);
    await router.waitForLoop(`${noisy.suite.namespace}/noisy`);
    await router.waitForLoop(`${noisy.suite.namespace}/noisy-2`);
    await eventually('the noisy tenant holds 100 calls', async () => (await metric(router, 'kubeloop_tenant_calls_in_flight', `tenant="${noisy.suite.namespace}"`)) === NOISY_IN_FLIGHT, 60_000);
    await router.waitForLoop(`${quiet.suite.namespace}/quiet`);
    await unconverge(quiet);
    await eventually('every quiet object converged', async () => (await converged(quiet)) === QUIET_OBJECTS, 60_000);
    expect(await converged(noisy)).toBe(0);

    releaseAll = true;
    for (const res of held.splice(0)) (res as ServerResponse & { answer?: () => void }).answer?.();
    await eventually('every noisy object converged', async () => (await converged(noisy)) === NOISY_OBJECTS, 120_000);
    await router.stop();
  });
});
