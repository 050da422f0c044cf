// A function in another language on the real control plane: the router sends annotated pods to the Python
// pod-name-label sample (samples/python, on the Python SDK) over HTTP, signed as the chart signs every
// function by default, and the pods get labelled: the function verifies the router and the router its replies.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { PYTHON_POD_NAME_LABEL, startSample, type RunningSample } from '../http/sample-processes.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

let h: RouterHarness;
let python: RunningSample;
let ns: string;

beforeAll(async () => {
  h = await routerHarness('router-python-function');
  ns = h.suite.namespace;
  const secret = generateSigningSecret();
  await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'python-signing' }, stringData: { secret } } });
  python = await startSample('python3', [PYTHON_POD_NAME_LABEL], { KUBELOOP_SIGNING_SECRET: secret });
  const signingSecretRef = { name: 'python-signing', namespace: ns, key: 'secret' };
  const router = await h.router([inlineLoop('pod-name-label-python', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: python.url, signingSecretRef } })]);
  await router.waitForLoop('pod-name-label-python');
});
afterAll(async () => {
  await h?.close();
  await python?.stop();
});

async function pod(name: string): Promise<V1Pod> {
  return h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/${name}` });
}

describe('the router with the Python pod-name-label function', () => {
  it('labels an annotated pod, leaves an unannotated one alone, and removes the label with the annotation', async () => {
    for (const [name, annotations] of [['annotated', { [ANNOTATION]: 'true' }], ['plain', {}]] as const) {
      await h.client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/pods`,
        body: { metadata: { name, annotations }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      });
    }
    await eventually('the annotated pod labelled with its name', async () => (await pod('annotated')).metadata?.labels?.[LABEL] === 'annotated');
    // The plain pod was sent too (same informer, same queue) and answered with no actions.
    expect((await pod('plain')).metadata?.labels?.[LABEL]).toBeUndefined();

    await h.client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns}/pods/annotated`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [ANNOTATION]: null } } },
    });
    await eventually('the label removed with the annotation', async () => (await pod('annotated')).metadata?.labels?.[LABEL] === undefined);
  });
});
