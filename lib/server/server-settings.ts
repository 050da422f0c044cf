// The settings every kubeloop HTTP server (function, webhook, the router's ops server) reads the same way: listen address, body
// limit, log level and drain delay, from the same flags and environment variables (flags win).
import { pickSetting, settingInteger, settingNumber, type FlagValues } from '../config/settings.ts';
import { parseLogLevel, type LogLevel } from '../observability/logger.ts';
import { parseOtlpHeaders, type TracingSettings } from '../observability/tracing.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from './body-limit.ts';

/** parseArgs options for the flags readServerSettings reads; spread into a command's own options. */
export const SERVER_FLAG_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'body-limit-bytes': { type: 'string' },
  'log-level': { type: 'string' },
  'drain-delay-seconds': { type: 'string' },
  'otlp-endpoint': { type: 'string' },
  'otlp-headers': { type: 'string' },
  'trace-sampling-ratio': { type: 'string' },
} as const;

/** The defaults every server shares (its port and body limit are its own: ServerSettingBounds). */
export const SERVER_DEFAULTS = { host: '0.0.0.0', logLevel: 'info', drainDelaySeconds: 0 } as const satisfies { host: string; logLevel: LogLevel; drainDelaySeconds: number };

/** Every trace sampled unless a parent says otherwise. */
export const DEFAULT_TRACE_SAMPLING_RATIO = 1;

/** Usage lines for the tracing flags every server takes. */
export const TRACING_USAGE = `tracing: --otlp-endpoint URL (OTEL_EXPORTER_OTLP_ENDPOINT; unset: tracing off), --otlp-headers k=v,...
(OTEL_EXPORTER_OTLP_HEADERS), --trace-sampling-ratio 0..1 (KUBELOOP_TRACE_SAMPLING_RATIO, default ${DEFAULT_TRACE_SAMPLING_RATIO}; parent-based)`;

export interface ServerSettings {
  port: number;
  host: string;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  /** Seconds between failing /readyz on SIGTERM and closing the listener (endpoint propagation). */
  drainDelaySeconds: number;
  /** OpenTelemetry export; off (no SDK loaded) without an OTLP endpoint. */
  tracing: TracingSettings;
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
    host: pickSetting(values, env, 'host', 'HOST')?.value ?? SERVER_DEFAULTS.host,
    bodyLimitBytes: settingInteger(
      pickSetting(values, env, 'body-limit-bytes', 'KUBELOOP_BODY_LIMIT_BYTES'),
      bounds.defaultBodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
      bounds.minBodyLimitBytes,
      1024 * 1024 * 1024,
    ),
    logLevel: level ? parseLogLevel(level.value, level.setting) : SERVER_DEFAULTS.logLevel,
    drainDelaySeconds: settingInteger(pickSetting(values, env, 'drain-delay-seconds', 'KUBELOOP_DRAIN_DELAY_SECONDS'), SERVER_DEFAULTS.drainDelaySeconds, 0, bounds.maxDrainDelaySeconds),
    tracing: readTracingSettings(values, env),
  };
}

export function readTracingSettings(values: FlagValues, env: NodeJS.ProcessEnv): TracingSettings {
  const endpoint = pickSetting(values, env, 'otlp-endpoint', 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint && !/^https?:\/\/[^/]/.test(endpoint.value)) throw new Error(`${endpoint.setting}: "${endpoint.value}" is not an http(s) URL (the OTLP/HTTP endpoint, e.g. http://jaeger:4318)`);
  const headers = pickSetting(values, env, 'otlp-headers', 'OTEL_EXPORTER_OTLP_HEADERS');
  return {
    ...(endpoint && endpoint.value !== '' ? { otlpEndpoint: endpoint.value } : {}),
    otlpHeaders: parseOtlpHeaders(headers?.value, headers?.setting ?? 'OTEL_EXPORTER_OTLP_HEADERS'),
    samplingRatio: settingNumber(pickSetting(values, env, 'trace-sampling-ratio', 'KUBELOOP_TRACE_SAMPLING_RATIO'), DEFAULT_TRACE_SAMPLING_RATIO, 0, 1),
  };
}
