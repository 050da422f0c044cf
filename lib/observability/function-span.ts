// The span of the function call running now, for the SDK's traceEvent/traceAttributes. Functions are
// synchronous (no I/O, no awaits), so one module variable set around the call is exact on every runtime,
// without AsyncLocalStorage: the Web fetch handler uses it too.
import type { Attributes, Span } from '@opentelemetry/api';

let current: Span | undefined;

/** Runs `call` with `span` as the function's span; restores the previous one (nested calls in tests). */
export function withFunctionSpan<T>(span: Span, call: () => T): T {
  const previous = current;
  current = span;
  try {
    return call();
  } finally {
    current = previous;
  }
}

/** Adds an event to the running call's span; a no-op outside a call or when the call is not traced. */
export function traceEvent(name: string, attributes?: Attributes): void {
  current?.addEvent(name, attributes);
}

/** Sets attributes on the running call's span (what the function decided, counts, names). */
export function traceAttributes(attributes: Attributes): void {
  current?.setAttributes(attributes);
}
