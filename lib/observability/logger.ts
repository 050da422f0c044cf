// pino JSON logger factory shared by every deployable; child loggers carry loop, key and reconcileId
// so one reconcile can be followed from the router's queue through a function and back.
import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import { lazyChild } from './lazy-child-logger.ts';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Deployable or component name, e.g. "router", "function/pod-name-label". */
  name: string;
  /** Defaults to "info". Validate configuration with parseLogLevel before passing it here. */
  level?: LogLevel;
  /** Where JSON lines go; stdout (synchronously) by default. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/** Validates a configured level; the error names the setting so a bad flag or env var is obvious. */
export function parseLogLevel(value: string | undefined, setting = 'KUBELOOP_LOG_LEVEL'): LogLevel {
  if (value === undefined || value === '') return 'info';
  const level = value.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new Error(`${setting}: invalid log level "${value}"; want one of ${LOG_LEVELS.join(', ')}`);
}

/** Longest string a log line carries per field; a caller's 8 MiB body must not become an 8 MiB log line. */
export const MAX_LOG_STRING = 2048;

export function clipText(text: string, max = MAX_LOG_STRING): string {
  return text.length > max ? `${text.slice(0, max)}... (${text.length - max} more characters)` : text;
}

function clipFields(object: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(object)) if (typeof value === 'string' && value.length > MAX_LOG_STRING) object[key] = clipText(value);
  return object;
}

function clippedError(error: Error): Record<string, unknown> {
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  if (typeof serialized.stack === 'string') serialized.stack = clipText(serialized.stack, 4 * MAX_LOG_STRING);
  if (typeof serialized.message === 'string') serialized.message = clipText(serialized.message);
  return serialized;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      // pino's own default reads pid and host name when it is loaded, which for the router is while its startup
      // snapshot is built (cli/build-snapshot.js): read here, they are the running process's.
      base: { pid: process.pid, hostname: hostname() },
      serializers: { err: clippedError },
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) {
            const arg = args[i] as unknown;
            if (typeof arg === 'string' && arg.length > MAX_LOG_STRING) (args as unknown[])[i] = clipText(arg);
          }
          method.apply(this, args);
        },
      },
      level: options.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      // Print the level as its name ("info"), which log pipelines match more readily than 30.
      formatters: { level: (label) => ({ level: label }), log: clipFields },
    },
    options.destination,
  );
}

/** The fields that identify one reconcile; any may be omitted where it does not apply yet. */
export interface ReconcileLogFields {
  /** Name of the Loop. */
  loop?: string;
  /** "namespace/name" (or "name" for cluster-scoped objects) of the primary object. */
  key?: string;
  reconcileId?: string;
  /** The reconcile's trace id when it is sampled: the log line leads to the trace. */
  traceId?: string;
}

export function reconcileLogger(parent: Logger, fields: ReconcileLogFields): Logger {
  const bindings: ReconcileLogFields = {};
  if (fields.loop !== undefined) bindings.loop = fields.loop;
  if (fields.key !== undefined) bindings.key = fields.key;
  if (fields.reconcileId !== undefined) bindings.reconcileId = fields.reconcileId;
  if (fields.traceId !== undefined) bindings.traceId = fields.traceId;
  // Built on first use: most reconciles log nothing at the production level (info).
  return lazyChild(parent, bindings);
}
