// defineFunction: the one way to write a reconcile function, a pure (request) => response.
import type { ReconcileRequest, ReconcileResponse } from '../contract/types.ts';

export type Reconcile = (request: ReconcileRequest) => ReconcileResponse;

export interface FunctionDefinition {
  /** Used in logs, metrics and the `kubeloop function <name>` command. */
  name: string;
  reconcile: Reconcile;
}

/** `takes`: what the define call wants, said when the name is wrong ("defineFunction takes { name, reconcile }"). */
export function assertFunctionName(name: string, takes = ''): void {
  if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new Error(`function name ${JSON.stringify(name ?? null)} must be a DNS label (lower-case letters, digits, '-')${takes ? `; ${takes}` : ''}`);
  }
}

/** The object's own keys, for an error that shows what was given instead. */
export function shapeOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  const keys = Object.keys(value);
  return keys.length > 0 ? `{ ${keys.join(', ')} }` : '{}';
}

const FUNCTION_SHAPE = "defineFunction takes { name, reconcile }: a DNS-label name (logs, metrics) and reconcile(request) => response, e.g. defineFunction({ name: 'my-controller', reconcile: (request) => ({ actions: [] }) })";

export function defineFunction(definition: FunctionDefinition): FunctionDefinition {
  const given = definition as Partial<FunctionDefinition> | null | undefined;
  if (typeof given?.reconcile !== 'function') throw new Error(`${FUNCTION_SHAPE}; got ${shapeOf(given)}`);
  assertFunctionName(definition.name, FUNCTION_SHAPE);
  return Object.freeze({ ...definition });
}
