// What a ReconcileResponse would do to the objects the request showed, computed locally for `kubeloop render`
// (no API server): patches applied with fast-json-patch, status replaced, creates and applies shown as sent,
// deletes listed. A patch that would fail on the server (a failed test, a missing path) is reported, not thrown.
import fastJsonPatch from 'fast-json-patch';
import type { Action, KubeObject, ObjectTarget, ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';

const { applyPatch } = fastJsonPatch;

export interface RenderedObjects {
  /** Every object that exists after the actions and was touched by one, in first-touched order. */
  objects: KubeObject[];
  /** Objects the actions delete, as "<apiVersion> <Kind> <namespace>/<name>". */
  deleted: string[];
  /** Events the actions record on the primary. */
  events: Array<{ type: string; reason: string; message: string }>;
  /** Actions that would fail when the router applied them. */
  problems: string[];
}

function keyOf(apiVersion: string | undefined, kind: string | undefined, namespace: string | undefined, name: string | undefined): string {
  return `${apiVersion ?? '?'} ${kind ?? '?'} ${namespace ? `${namespace}/` : ''}${name ?? '?'}`;
}

function targetKey(target: ObjectTarget): string {
  return keyOf(target.apiVersion, target.kind, target.namespace, target.name);
}

function objectKey(object: KubeObject): string {
  return keyOf(object.apiVersion, object.kind, object.metadata?.namespace, object.metadata?.name ?? `${object.metadata?.generateName ?? ''}*`);
}

export function applyLocally(request: ReconcileRequest, response: ReconcileResponse): RenderedObjects {
  const known = new Map<string, KubeObject>();
  for (const object of [request.object, ...Object.values(request.children).flat()]) known.set(objectKey(object), structuredClone(object));
  const primaryKey = objectKey(request.object);
  const touched: string[] = [];
  const touch = (key: string): void => {
    if (!touched.includes(key)) touched.push(key);
  };
  const result: RenderedObjects = { objects: [], deleted: [], events: [], problems: [] };

  response.actions.forEach((action: Action, index) => {
    const where = `action #${index} (${action.op})`;
    switch (action.op) {
      case 'patch': {
        const key = targetKey(action.target);
        const current = known.get(key);
        if (!current) {
          result.problems.push(`${where}: ${key} is neither the primary nor one of the children given`);
          return;
        }
        try {
          known.set(key, applyPatch(structuredClone(current), action.patch, true, false).newDocument);
          touch(key);
        } catch (error) {
          result.problems.push(`${where} on ${key}: ${(error as Error).message.split('\n')[0]}`);
        }
        return;
      }
      case 'create':
      case 'apply': {
        const key = objectKey(action.object);
        const before = known.get(key);
        if (action.op === 'create' && before && action.object.metadata?.name) result.problems.push(`${where}: ${key} already exists (the server would answer 409 AlreadyExists)`);
        known.set(key, action.op === 'apply' && before ? { ...before, ...action.object } : structuredClone(action.object));
        touch(key);
        return;
      }
      case 'delete': {
        const key = targetKey(action.target);
        known.delete(key);
        result.deleted.push(key);
        return;
      }
      case 'status': {
        const primary = known.get(primaryKey);
        if (primary) known.set(primaryKey, { ...primary, status: action.status });
        touch(primaryKey);
        return;
      }
      case 'event':
        result.events.push({ type: action.type, reason: action.reason, message: action.message });
        return;
    }
  });
  result.objects = touched.filter((key) => known.has(key)).map((key) => known.get(key) as KubeObject);
  return result;
}
