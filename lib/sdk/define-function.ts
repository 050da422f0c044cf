// defineFunction: the one way to write a reconcile function, a pure (request) => response.
import type { ReconcileRequest, ReconcileResponse } from '../contract/types.ts';

export type Reconcile = (request: ReconcileRequest) => ReconcileResponse;

export interface FunctionDefinition {
  /** Used in logs, metrics and the `kubeloop function <name>` command. */
  name: string;
  reconcile: Reconcile;
}

export function defineFunction(definition: FunctionDefinition): FunctionDefinition {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(definition.name)) {
    throw new Error(`function name "${definition.name}" must be a DNS label (lower-case letters, digits, '-')`);
  }
  return Object.freeze({ ...definition });
}
