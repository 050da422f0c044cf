// Configuration of `kubeloop function <name>`: flags win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { pickSetting, settingInteger } from '../config/settings.ts';
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
  const pick = (flag: keyof typeof values, variable: string) => pickSetting(values, env, flag, variable);
  const level = pick('log-level', 'KUBELOOP_LOG_LEVEL');
  return {
    name,
    port: settingInteger(pick('port', 'PORT'), 8080, 0, 65535),
    host: pick('host', 'HOST')?.value ?? '0.0.0.0',
    // At least 1 KiB: anything smaller cannot hold a ReconcileRequest.
    bodyLimitBytes: settingInteger(pick('body-limit-bytes', 'KUBELOOP_BODY_LIMIT_BYTES'), DEFAULT_BODY_LIMIT_BYTES, 1024, 1024 * 1024 * 1024),
    logLevel: level ? parseLogLevel(level.value, level.setting) : 'info',
    drainDelaySeconds: settingInteger(pick('drain-delay-seconds', 'KUBELOOP_DRAIN_DELAY_SECONDS'), 0, 0, 300),
  };
}
