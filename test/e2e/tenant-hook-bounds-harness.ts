// The admission functions tenant-hook-bounds.test.ts points its hooks at, served in this process: a gate that
// allows everything and records the context it was sent, a cluster admin's stamp and a tenant's unstamp
// mutation, and a function that never answers; and the dry-run ConfigMap create the attacks are made of.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, mutate } from '../../lib/sdk/index.ts';

const servers: Array<{ close(): unknown }> = [];
/** Calls the never-answering function holds. */
const held: Array<() => void> = [];
/** Context names the gate function saw, by the object's test label. */
export const seenContext = new Map<string, Record<string, unknown>>();

/** Allows everything; records the context it was sent. */
export const gate = defineAdmission({
  name: 'gate',
  type: 'validating',
  admit: (request) => {
    seenContext.set(request.object?.metadata?.labels?.test ?? '', (request.context ?? {}) as Record<string, unknown>);
    return allow();
  },
});
export const stamp = defineAdmission({ name: 'stamp', type: 'mutating', admit: (request) => mutate(request, (o) => void (o.metadata!.labels = { ...o.metadata?.labels, stamped: 'by-cluster' })) });
export const unstamp = defineAdmission({
  name: 'unstamp',
  type: 'mutating',
  admit: (request) =>
    mutate(request, (o) => {
      const { stamped: _stamped, ...labels } = o.metadata?.labels ?? {};
      o.metadata!.labels = { ...labels, touched: 'by-tenant' };
    }),
});

/** Serves `definition` on a free loopback port; its admission URL. */
export async function serve(definition: Parameters<typeof serveFunction>[0]): Promise<string> {
  const fn: ServedFunction = await serveFunction(definition, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'fn', level: 'silent' }) });
  servers.push(fn);
  return `${fn.url}/admit`;
}

/** An admission function that never answers (until closeFunctions). */
export async function never(): Promise<string> {
  const server: Server = createServer((request, response) => {
    request.resume();
    held.push(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => server.close() });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/admit`;
}

/** Drops the held calls and closes every function served. */
export async function closeFunctions(): Promise<void> {
  for (const release of held) release();
  for (const server of servers) await server.close();
}

/** A ConfigMap create (server-side dry run) as `client`; the object as admitted, or the refusal's message. */
export async function createConfigMap(client: KubeClient, namespace: string, test: string, data: Record<string, string> = {}, dryRun = true): Promise<{ labels?: Record<string, string>; refused?: string }> {
  try {
    const created = await client.request<{ metadata?: { labels?: Record<string, string> } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      ...(dryRun ? { query: { dryRun: 'All' } } : {}),
      body: { metadata: { generateName: `${test}-`, labels: { test } }, data },
    });
    return { labels: created.metadata?.labels ?? {} };
  } catch (error) {
    if (isApiError(error)) return { refused: error.message };
    throw error;
  }
}
