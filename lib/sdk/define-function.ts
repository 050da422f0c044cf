// defineFunction: the one way to write a reconcile function, a pure (request) => response.
import type { ReconcileRequest, ReconcileResponse } from '../contract/types.ts';

export type Reconcile = (request: ReconcileRequest) => ReconcileResponse;

export interface FunctionDefinition {
  /** Used in logs, metrics and the `kubeloop function <name>` command. */
  name: string;
  reconcile: Reconcile;
}

export function assertFunctionName(name: string): void {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new Error(`function name "${name}" must be a DNS label (lower-case letters, digits, '-')`);
  }
}

export function defineFunction(definition: FunctionDefinition): FunctionDefinition {
  assertFunctionName(definition.name);
  return Object.freeze({ ...definition });
}
