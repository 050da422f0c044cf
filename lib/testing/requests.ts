// Builds ReconcileRequests shaped as the router sends them, for unit tests of reconcile functions.
import type { KubeObject, ReconcileRequest, TriggerType } from '../contract/types.ts';

export interface RequestParts {
  loop?: string;
  trigger?: TriggerType;
  children?: Record<string, KubeObject[]>;
  now?: string;
  finalizing?: boolean;
}

export function requestFor(object: KubeObject, parts: RequestParts = {}): ReconcileRequest {
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'ReconcileRequest',
    loop: parts.loop ?? 'test',
    reconcileId: 'test-reconcile',
    trigger: { type: parts.trigger ?? 'MODIFIED' },
    object,
    children: parts.children ?? {},
    ...(parts.finalizing === undefined ? {} : { finalizing: parts.finalizing }),
    now: parts.now ?? '2026-11-22T10:00:00Z',
  };
}

/**
 * A deep copy with `change` applied, for building variants of one object in a test. The copy goes through
 * JSON, as everything the router sends does, so Date values set in `change` become RFC 3339 strings.
 */
export function variant<T>(object: T, change: (copy: T) => void): T {
  const copy = structuredClone(object);
  change(copy);
  return JSON.parse(JSON.stringify(copy)) as T;
}

/** An object literal written as JSON (times as strings) typed as the client-node model. */
export function kubeObject<T = KubeObject>(json: object): T {
  return JSON.parse(JSON.stringify(json)) as T;
}
