// The settings every kubeloop HTTP server (function, webhook, the router's ops server) reads the same way: listen address, body
// limit, log level and drain delay, from the same flags and environment variables (flags win).
import { pickSetting, settingInteger, type FlagValues } from '../config/settings.ts';
import { parseLogLevel, type LogLevel } from '../observability/logger.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from './create-server.ts';

/** parseArgs options for the flags readServerSettings reads; spread into a command's own options. */
export const SERVER_FLAG_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'body-limit-bytes': { type: 'string' },
  'log-level': { type: 'string' },
  'drain-delay-seconds': { type: 'string' },
} as const;

export interface ServerSettings {
  port: number;
  host: string;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  /** Seconds between failing /readyz on SIGTERM and closing the listener (endpoint propagation). */
  drainDelaySeconds: number;
}

/** What differs between the servers: their default port and the ranges that make sense for them. */
export interface ServerSettingBounds {
  defaultPort: number;
  minBodyLimitBytes: number;
  maxDrainDelaySeconds: number;
  /** Default DEFAULT_BODY_LIMIT_BYTES; servers with smaller requests (the webhook) set less. */
  defaultBodyLimitBytes?: number;
  /** Environment variables for the port, first set wins; PORT by default. */
  portVariables?: readonly string[];
}

export function readServerSettings(values: FlagValues, env: NodeJS.ProcessEnv, bounds: ServerSettingBounds): ServerSettings {
  const level = pickSetting(values, env, 'log-level', 'KUBELOOP_LOG_LEVEL');
  return {
    port: settingInteger(pickSetting(values, env, 'port', ...(bounds.portVariables ?? ['PORT'])), bounds.defaultPort, 0, 65535),
    host: pickSetting(values, env, 'host', 'HOST')?.value ?? '0.0.0.0',
    bodyLimitBytes: settingInteger(
      pickSetting(values, env, 'body-limit-bytes', 'KUBELOOP_BODY_LIMIT_BYTES'),
      bounds.defaultBodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
      bounds.minBodyLimitBytes,
      1024 * 1024 * 1024,
    ),
    logLevel: level ? parseLogLevel(level.value, level.setting) : 'info',
    drainDelaySeconds: settingInteger(pickSetting(values, env, 'drain-delay-seconds', 'KUBELOOP_DRAIN_DELAY_SECONDS'), 0, 0, bounds.maxDrainDelaySeconds),
  };
}
