// Public surface of the function runtime: one core, served by fastify, node:http (what function images run),
// a fetch handler or a Node handler.
export { ADMIT_PATHS, RECONCILE_PATHS } from './http-replies.ts';
export { functionKindOf, type AnyFunctionDefinition } from './function-kinds.ts';
export { buildFunctionServer, serveFunction, type FunctionServer, type FunctionServerOptions, type ServedFunction } from './function-server.ts';
export { toFetchHandler, type FetchHandlerOptions } from './fetch-handler.ts';
export { consoleLogger } from './console-logger.ts';
export { toNodeHandler } from './node-handler.ts';
export { buildNodeFunctionServer, serveNodeFunction, type NodeFunctionServer, type ServedNodeFunction } from './node-function-server.ts';
export { createFunctionCore, RECONCILE_ID_HEADER, type FunctionCore, type FunctionErrorCode, type FunctionErrorReply } from './function-core.ts';
export { readFunctionConfig, type FunctionConfig } from './config.ts';
export { withSigning, type SigningOptions } from './signed-core.ts';
