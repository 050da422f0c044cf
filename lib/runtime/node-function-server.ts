// A reconcile function served on node:http through the Node handler: what `kubeloop function` (and so every
// function image) runs. It answers as the fastify server does (function-server.ts, the generic runtime's option)
// with the same timeouts and shutdown (lib/server/node-server.ts), without loading a framework: ~5 MiB less RSS per function pod
// (docs/performance.md, "Function memory").
import type { Registry } from 'prom-client';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import type { FunctionCore } from './function-core.ts';
import type { FunctionServerOptions } from './function-options.ts';
import { nodeFunctionHandler } from './node-handler.ts';
import { createNodeServer, listenNode, type NodeServer } from '../server/node-server.ts';

export interface NodeFunctionServer extends NodeServer {
  core: FunctionCore;
  metrics: Registry;
}

export function buildNodeFunctionServer(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): NodeFunctionServer {
  // /readyz fails once shutdown began: the server's own flag, read through this holder made before the server.
  const shutdown = { began: (): boolean => false };
  const handler = nodeFunctionHandler(definition, options, () => !shutdown.began());
  const served = createNodeServer(handler.listener, { log: handler.logger, ...(options.timeouts ? { timeouts: options.timeouts } : {}) });
  shutdown.began = served.isClosing;
  return { ...served, core: handler.core, metrics: handler.metrics };
}

export interface ServedNodeFunction {
  url: string;
  server: NodeFunctionServer;
  close(): Promise<void>;
}

/** Builds and listens; `port: 0` picks a free port (see `url`). */
export async function serveNodeFunction(
  definition: AnyFunctionDefinition,
  where: { port: number; host?: string } & FunctionServerOptions,
): Promise<ServedNodeFunction> {
  const built = buildNodeFunctionServer(definition, where);
  const url = await listenNode(built.server, where);
  return { url, server: built, close: () => built.close() };
}
