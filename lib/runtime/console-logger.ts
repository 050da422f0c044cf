// A JSON-lines logger on `console`, for the fetch handler where pino is unavailable (Workers, Deno, Bun):
// one line per call with level, time, name, message and fields, as pino writes them.
import type { LogLevel } from '../observability/logger.ts';
import type { CoreLogger } from './function-core.ts';

const SEVERITY: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

export function consoleLogger(name: string, level: LogLevel = 'info'): CoreLogger {
  const threshold = SEVERITY[level];
  const enabled = (wanted: string) => (SEVERITY[wanted as LogLevel] ?? Infinity) >= threshold;
  const write = (wanted: LogLevel, fields: object, message: string) => {
    if (!enabled(wanted)) return;
    const line = JSON.stringify({ level: wanted, time: new Date().toISOString(), name, msg: message, ...serializable(fields) });
    if (SEVERITY[wanted] >= SEVERITY.warn) console.error(line);
    else console.log(line);
  };
  return {
    error: (fields, message) => write('error', fields, message),
    warn: (fields, message) => write('warn', fields, message),
    debug: (fields, message) => write('debug', fields, message),
    isLevelEnabled: enabled,
  };
}

/** Errors keep their message and stack (JSON.stringify would print them as {}). */
function serializable(fields: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, stack: value.stack } : value;
  }
  return out;
}
