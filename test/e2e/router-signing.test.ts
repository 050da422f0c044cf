// Signed calls end to end with Loop objects: a Loop naming its signing Secret reaches a function that has
// the key; a reply signed with another key is never applied (Ready=False InvalidSignature, a Warning
// event); a reply asking for 10,000 actions is refused whole; a Loop whose Secret is missing waits; a
// rotated Secret is used from the next call, without a router restart.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFunction } from '../../functions/registry.ts';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { serveFunction } from '../../lib/runtime/index.ts';
import { generateSigningSecret, parseSigningSecret, signReply, verifyRequest, type SigningKey, type SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { eventually } from '../cluster/eventually.ts';
import type { Router } from '../../router/start-router.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { closeServer } from '../support/close-server.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
const SECRET = generateSigningSecret();

let h: RouterHarness;
let ns: string;
let router: Router;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  h = await routerHarness('router-signing');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/secrets`,
    body: { metadata: { name: 'fn-signing' }, stringData: { secret: SECRET } },
  });
  router = await h.router(undefined, { loopSelector: h.loopSelector });
});
afterAll(async () => {
  for (const close of closers) await close();
  await h?.close();
});

/**
 * A function that answers like pod-name-label but with a reply it forges: signed with `key` (or several),
 * or padded with actions. `onRequest` sees each request's headers and body first.
 */
async function forgingFunction(
  forge: (response: ReconcileResponse) => ReconcileResponse,
  key: SigningKey | SigningKeys,
  onRequest: (headers: Record<string, string | string[] | undefined>, body: string) => void = () => {},
): Promise<{ url: string; calls: () => number }> {
  const definition = await loadFunction('pod-name-label');
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      calls++;
      onRequest(req.headers, body);
      const request = JSON.parse(body) as ReconcileRequest;
      const reply = JSON.stringify(forge(definition.reconcile(request)));
      res.writeHead(200, { 'content-type': 'application/json', ...signReply(key, `loop/${request.loop}`, String(req.headers['webhook-id']), reply) }).end(reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => closeServer(server));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, calls: () => calls };
}

async function createLoop(name: string, url: string, secretName = 'fn-signing'): Promise<void> {
  await h.createLoop(name, {
    for: { apiVersion: 'v1', kind: 'Pod' },
    namespaces: [ns],
    serviceAccount: h.loopServiceAccount,
    selector: { matchLabels: { case: name } },
    metadataOnly: true,
    function: { url, timeoutSeconds: 2, signingSecretRef: { name: secretName, namespace: ns, key: 'secret' } },
  });
}

async function pod(name: string, loop: string): Promise<void> {
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: { metadata: { name, labels: { case: loop }, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
}
const labelOf = async (name: string) => (await h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/${name}` })).metadata?.labels?.[LABEL];

const readyCondition = async (name: string) => (await h.loopStatus(name)).ready;

async function warnings(podName: string): Promise<Array<{ reason: string; message: string }>> {
  const list = await h.client.request<{ items: Array<{ reason: string; message: string; type: string }> }>({
    path: `/api/v1/namespaces/${ns}/events`,
    query: { fieldSelector: `involvedObject.name=${podName}` },
  });
  return list.items.filter((e) => e.type === 'Warning');
}

describe('signed calls between the router and functions', () => {
  it('reconciles through a function that holds the Loop key', async () => {
    const served = await serveFunction(await loadFunction('pod-name-label'), { port: 0, host: '127.0.0.1', logLevel: 'warn', signingSecret: SECRET });
    closers.push(() => served.close());
    await createLoop('signed', served.url);
    await pod('signed-a', 'signed');
    await eventually('pod labelled through signed calls', async () => (await labelOf('signed-a')) === 'signed-a');
    expect((await readyCondition('signed'))?.status).toBe('True');
  });

  it('never applies a reply signed with another key', async () => {
    const impostor = await forgingFunction((r) => r, parseSigningSecret(generateSigningSecret()));
    await createLoop('forged', impostor.url);
    await pod('forged-a', 'forged');
    const ready = await eventually('Ready=False InvalidSignature', async () => {
      const c = await readyCondition('forged');
      return c?.reason === 'InvalidSignature' && c;
    });
    expect(ready.status).toBe('False');
    expect(ready.message).toContain('no webhook-signature matches');
    const events = await eventually('a Warning event on the pod', async () => {
      const found = await warnings('forged-a');
      return found.length > 0 && found;
    });
    expect(events[0]).toMatchObject({ reason: 'InvalidSignature' });
    // Retried with backoff, refused every time: the label the forged reply asks for never appears.
    await eventually('retried', async () => impostor.calls() >= 2);
    expect(await labelOf('forged-a')).toBeUndefined();
  });

  it('refuses a correctly signed reply asking for 10,000 actions, applying none of them', async () => {
    const flood = await forgingFunction(
      (r) => ({ ...r, actions: [...r.actions, ...Array.from({ length: 10_000 }, (_, i) => ({ op: 'event' as const, type: 'Normal' as const, reason: 'Flood', message: `n${i}` }))] }),
      parseSigningSecret(SECRET),
    );
    await createLoop('flood', flood.url);
    await pod('flood-a', 'flood');
    const ready = await eventually('Ready=False InvalidResponse', async () => {
      const c = await readyCondition('flood');
      return c?.reason === 'InvalidResponse' && c;
    });
    expect(ready.message).toContain('reply has 10001 actions; at most 1000 are accepted per reply');
    expect(await labelOf('flood-a')).toBeUndefined();
    const events = await h.client.request<{ items: Array<{ reason: string }> }>({ path: `/api/v1/namespaces/${ns}/events` });
    expect(events.items.filter((e) => e.reason === 'Flood')).toHaveLength(0);
  });

  it('does not start a Loop whose signing Secret is missing, and says so', async () => {
    await createLoop('nokey', 'http://127.0.0.1:1/', 'no-such-secret');
    const ready = await eventually('Ready=False InvalidSigningSecret', async () => {
      const c = await readyCondition('nokey');
      return c?.reason === 'InvalidSigningSecret' && c;
    });
    expect(ready.message).toBe(`signing Secret ${ns}/no-such-secret key "secret": the Secret does not exist`);
  });
});

describe('rotating a Loop signing key without restarting the router', () => {
  const OLD = generateSigningSecret();
  const NEW = generateSigningSecret();
  const secretPath = () => `/api/v1/namespaces/${ns}/secrets/rot-signing`;
  const setSecret = (value: string) =>
    h.client.request({ method: 'PATCH', path: secretPath(), contentType: 'application/merge-patch+json', body: { data: { secret: Buffer.from(value).toString('base64') } } });

  it('signs the next calls with the new key once the Secret changes, the Loop running throughout', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'rot-signing' }, stringData: { secret: OLD } } });
    // The function mid-rotation holds both keys (as `whsec_new whsec_old` would) and notes which key signed each call.
    const signedWith: Array<'old' | 'new' | 'none'> = [];
    const keys = { old: parseSigningSecret(OLD), new: parseSigningSecret(NEW) };
    const fn = await forgingFunction((r) => r, [keys.new, keys.old], (headers, body) => {
      signedWith.push(verifyRequest(keys.new, headers, body).ok ? 'new' : verifyRequest(keys.old, headers, body).ok ? 'old' : 'none');
    });
    await createLoop('rotating', fn.url, 'rot-signing');
    await pod('rotating-a', 'rotating');
    await eventually('pod labelled with the old key', async () => (await labelOf('rotating-a')) === 'rotating-a');
    expect(signedWith).not.toContain('new');
    const runnerBefore = await router.waitForLoop('rotating');

    await setSecret(NEW);
    const callsBefore = signedWith.length;
    await eventually('a call signed with the new key', async () => {
      // New pods until the router has seen the Secret change: each is one call.
      if (signedWith.slice(callsBefore).includes('new')) return true;
      await pod(`rotating-${signedWith.length}-${Date.now() % 100_000}`, 'rotating').catch(() => undefined);
      return false;
    });
    await pod('rotating-b', 'rotating');
    await eventually('pod labelled with the new key', async () => (await labelOf('rotating-b')) === 'rotating-b');
    // Once switched, only the new key is used; nothing was refused and the Loop never stopped.
    expect(signedWith.slice(signedWith.indexOf('new'))).not.toContain('old');
    expect(signedWith).not.toContain('none');
    expect((await readyCondition('rotating'))?.status).toBe('True');
    expect(await router.waitForLoop('rotating')).toBe(runnerBefore);
  });

  it('stops the Loop with InvalidSigningSecret when the Secret breaks, and resumes once it is fixed', async () => {
    await setSecret('whsec_broken');
    const ready = await eventually('Ready=False InvalidSigningSecret', async () => {
      const c = await readyCondition('rotating');
      return c?.reason === 'InvalidSigningSecret' && c;
    });
    expect(ready.message).toContain('not "whsec_" followed by base64');
    expect(ready.message).not.toContain('broken');
    await setSecret(NEW);
    await eventually('Ready=True again', async () => (await readyCondition('rotating'))?.status === 'True');
    await pod('rotating-c', 'rotating');
    await eventually('pod labelled after the fix', async () => (await labelOf('rotating-c')) === 'rotating-c');
  });
});
