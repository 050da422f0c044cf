// A fake KubeClient answering every request, a JSON patch's bytes too (read by router/apply/json-patch.ts), from one
// function: for unit tests of the write path without an API server.
import type { KubeClient, KubeRequest } from '../../lib/kube/kube-client.ts';

export function jsonAnswering(answer: (request: KubeRequest) => unknown): KubeClient {
  const request = async (r: KubeRequest) => answer(r);
  const requestBytes = async (r: KubeRequest) => ({ bytes: Buffer.from(JSON.stringify(await request(r))), contentType: 'application/json' });
  return { request, requestBytes } as unknown as KubeClient;
}
