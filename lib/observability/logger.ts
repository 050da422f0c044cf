// pino JSON logger factory shared by every deployable; child loggers carry loop, key and reconcileId
// so one reconcile can be followed from the router's queue through a function and back.
import { pino, type DestinationStream, type Logger } from 'pino';

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

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      // Print the level as its name ("info"), which log pipelines match more readily than 30.
      formatters: { level: (label) => ({ level: label }) },
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
}

export function reconcileLogger(parent: Logger, fields: ReconcileLogFields): Logger {
  const bindings: ReconcileLogFields = {};
  if (fields.loop !== undefined) bindings.loop = fields.loop;
  if (fields.key !== undefined) bindings.key = fields.key;
  if (fields.reconcileId !== undefined) bindings.reconcileId = fields.reconcileId;
  return parent.child(bindings);
}
