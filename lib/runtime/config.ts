// Configuration of `kubeloop function <name>`: flags win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { parseLogLevel, type LogLevel } from '../observability/logger.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/create-server.ts';

export interface FunctionConfig {
  name: string;
  port: number;
  host: string;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  /** Seconds between failing /readyz on SIGTERM and closing the listener (endpoint propagation). */
  drainDelaySeconds: number;
}

export const FUNCTION_USAGE = `usage: kubeloop function <name> [--port 8080] [--host 0.0.0.0] [--body-limit-bytes N] [--log-level info] [--drain-delay-seconds 0]

environment: PORT, HOST, KUBELOOP_BODY_LIMIT_BYTES, KUBELOOP_LOG_LEVEL, KUBELOOP_DRAIN_DELAY_SECONDS (flags win)`;

function integer(value: string, setting: string, min: number, max: number): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new Error(`${setting}: "${value}" is not an integer between ${min} and ${max}`);
  }
  return parsed;
}

export function readFunctionConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): FunctionConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'body-limit-bytes': { type: 'string' },
      'log-level': { type: 'string' },
      'drain-delay-seconds': { type: 'string' },
    },
  });
  const [name, ...extra] = positionals;
  if (!name) throw new Error(`missing the function name\n${FUNCTION_USAGE}`);
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(' ')}\n${FUNCTION_USAGE}`);
  const pick = (flag: keyof typeof values, variable: string): [string, string] | undefined => {
    const fromFlag = values[flag];
    if (typeof fromFlag === 'string') return [fromFlag, `--${flag}`];
    const fromEnv = env[variable];
    return fromEnv === undefined || fromEnv === '' ? undefined : [fromEnv, variable];
  };
  const port = pick('port', 'PORT');
  const limit = pick('body-limit-bytes', 'KUBELOOP_BODY_LIMIT_BYTES');
  const level = pick('log-level', 'KUBELOOP_LOG_LEVEL');
  const drain = pick('drain-delay-seconds', 'KUBELOOP_DRAIN_DELAY_SECONDS');
  return {
    name,
    port: port ? integer(port[0], port[1], 0, 65535) : 8080,
    host: pick('host', 'HOST')?.[0] ?? '0.0.0.0',
    // At least 1 KiB: anything smaller cannot hold a ReconcileRequest.
    bodyLimitBytes: limit ? integer(limit[0], limit[1], 1024, 1024 * 1024 * 1024) : DEFAULT_BODY_LIMIT_BYTES,
    logLevel: level ? parseLogLevel(level[0], level[1]) : 'info',
    drainDelaySeconds: drain ? integer(drain[0], drain[1], 0, 300) : 0,
  };
}
