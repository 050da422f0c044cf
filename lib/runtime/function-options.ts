// The options every Node transport of a function takes (the node:http server the images run, the fastify
// server, the Node handler), apart from the servers themselves so none of them loads another's framework.
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { createLogger, type Logger, type LogLevel } from '../observability/logger.ts';
import type { ServerTimeouts } from '../server/server-timeouts.ts';
import type { SigningOptions } from './signed-core.ts';

export interface FunctionServerOptions extends SigningOptions {
  /** Defaults to a JSON logger named "function/<name>" at `logLevel`. */
  logger?: Logger;
  logLevel?: LogLevel;
  /** Default DEFAULT_BODY_LIMIT_BYTES (8 MiB). */
  bodyLimitBytes?: number;
  /** Request and connection timeouts of the server (DEFAULT_SERVER_TIMEOUTS). */
  timeouts?: Partial<ServerTimeouts>;
}

export function functionLogger(definition: AnyFunctionDefinition, options: FunctionServerOptions): Logger {
  return options.logger ?? createLogger({ name: `function/${definition.name}`, level: options.logLevel ?? 'info' });
}
