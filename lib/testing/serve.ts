// Serves a function in-process on a free loopback port with logging off, for tests and `kubeloop replay
// --function`: the same fastify runtime as `kubeloop function`, so tests exercise the real HTTP path.
import type { AnyFunctionDefinition } from '../runtime/function-kinds.ts';
import { serveFunction, type FunctionServerOptions } from '../runtime/function-server.ts';

export interface TestServer {
  /** Base URL, http://127.0.0.1:<port>; POST ReconcileRequests to `${url}/` or `${url}/reconcile`. */
  url: string;
  close(): Promise<void>;
}

export async function serveForTest(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): Promise<TestServer> {
  const served = await serveFunction(definition, { logLevel: 'silent', ...options, port: 0, host: '127.0.0.1' });
  return { url: served.url, close: served.close };
}
