// Whether the API server says it is ready before a decision is taken on its answers: while it starts, its
// authorizer's caches may still be empty, and an access review it answers then can deny what RBAC allows.
import type { KubeClient } from './kube-client.ts';
import { isTransientApiFailure } from './transient.ts';

export class ApiServerNotReady extends Error {
  constructor(detail: string) {
    super(`the API server is not ready (GET /readyz: ${detail}): its access reviews may deny what RBAC allows`);
    this.name = 'ApiServerNotReady';
  }
}

/**
 * Throws ApiServerNotReady while GET /readyz fails as a server that is starting, stopping or unreachable fails
 * (5xx, 429, a connection refused or cut). A /readyz this process may not read (a 403 where public-info-viewer
 * was taken away) says nothing about readiness: that resolves, so such a cluster is never left unreconciled.
 */
export async function assertApiServerReady(client: Pick<KubeClient, 'requestText'>): Promise<void> {
  try {
    await client.requestText({ path: '/readyz' });
  } catch (error) {
    if (isTransientApiFailure(error)) throw new ApiServerNotReady(error instanceof Error ? error.message : String(error));
  }
}
