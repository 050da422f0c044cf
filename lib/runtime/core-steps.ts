// The steps of one call that a single request and each item of a batch share (function-core.ts,
// batch-core.ts): the error type with its status and stable code, request acceptance, the call and its
// reply check, and how a failure is logged and counted.
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../contract/json-depth.ts';
import type { FunctionMetrics } from './function-metrics.ts';
import { apiVersionProblem, type FunctionKind } from './function-kinds.ts';

/** Stable codes in error replies and the kubeloop_function_errors_total metric. */
export type FunctionErrorCode =
  | 'UnsupportedMediaType'
  | 'InvalidJSON'
  | 'InvalidCloudEvent'
  | 'UnsupportedApiVersion'
  | 'InvalidRequest'
  | 'PayloadTooLarge'
  | 'InvalidSignature'
  | 'FunctionError'
  | 'InvalidResponse';

/** What the core logs through: a pino Logger fits, and so does consoleLogger (console-logger.ts). */
export interface CoreLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  isLevelEnabled(level: string): boolean;
}

export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: FunctionErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** Where one call's outcome goes: the log and the metrics. */
export interface CallSinks {
  log: CoreLogger;
  metrics: FunctionMetrics;
}

/** Checks the parsed request: contract version, nesting depth, then the kind's own validation. */
export function acceptRequest(kind: FunctionKind, value: unknown) {
  const versionProblem = apiVersionProblem(value);
  if (versionProblem) throw new RequestError(400, 'UnsupportedApiVersion', versionProblem);
  if (nestsDeeperThan(value)) throw new RequestError(400, 'InvalidRequest', `request nests deeper than ${MAX_JSON_DEPTH} levels`);
  const checked = kind.accept(value);
  if (!checked.ok) throw new RequestError(400, 'InvalidRequest', checked.message);
  return checked.value;
}

/** Calls the user's function and checks what it returned. */
export function callFunction(kind: FunctionKind, name: string, request: unknown) {
  let response: unknown;
  try {
    response = kind.call(request);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RequestError(500, 'FunctionError', `function ${name} threw: ${reason}`, error);
  }
  if (typeof (response as { then?: unknown } | undefined)?.then === 'function') {
    throw new RequestError(500, 'InvalidResponse', `function ${name} returned a Promise; functions are synchronous (no I/O)`);
  }
  const checked = kind.check(response);
  if (!checked.ok) throw new RequestError(500, 'InvalidResponse', `function ${name} returned an ${checked.message}`);
  return checked.value;
}

/** Logs and counts a failed call (or batch item). */
export function recordError(sinks: CallSinks, started: number, error: RequestError, reconcileId: string, context: Record<string, unknown>): void {
  const fields = { ...context, reconcileId, code: error.code, statusCode: error.status };
  if (error.status >= 500) sinks.log.error({ ...fields, err: error.cause ?? error }, error.message);
  else sinks.log.warn(fields, error.message);
  sinks.metrics.error(error.code);
  sinks.metrics.observe(error.status, (performance.now() - started) / 1000);
}
