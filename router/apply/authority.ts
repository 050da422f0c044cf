// Least authority: an action may only touch the primary and objects of the Loop's owned kinds in the
// primary's namespace (judged by the kind's resolved scope, never by the namespace a function wrote), and an
// owned object only when nothing else controls it. The kind is checked first (checkKind), before any lookup.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Action, ObjectTarget } from '../../lib/contract/types.ts';
import { controllerUid, refersTo } from '../../lib/kube/object-meta.ts';
import { isOwnedKind, type LoopConfig } from '../base/loop-spec.ts';
import { writeConfinementProblem } from '../base/loop-confinement.ts';

export type AuthorityVerdict = { allowed: true } | { allowed: false; reason: string };

export interface AuthorityContext {
  loop: Pick<LoopConfig, 'id' | 'namespace' | 'for' | 'owns'>;
  primary: KubernetesObject;
  /**
   * The target's current state: from the router's cache, or read live on a cache miss (a child outside the
   * Loop's namespaces, one the watch has not shown yet); undefined only when the object does not exist.
   */
  lookup: (apiVersion: string, kind: string, namespace: string | undefined, name: string) => KubernetesObject | undefined;
  /**
   * The target kind's scope as discovery resolved it. A namespace a function writes on a cluster-scoped
   * object means nothing to the API server, so only this decides whether the target is in a namespace.
   */
  targetNamespaced: boolean;
}

function describe(t: { apiVersion?: string; kind?: string; namespace?: string; name?: string }): string {
  return `${t.kind ?? '?'} ${t.apiVersion ?? '?'} ${t.namespace ? `${t.namespace}/` : ''}${t.name ?? '(generated name)'}`;
}

function isPrimary(ctx: AuthorityContext, t: Partial<ObjectTarget>): boolean {
  return refersTo(t, ctx.primary);
}

/** Why the target is out of the primary's reach, or undefined: a namespaced primary reaches only its own namespace. */
function scopeProblem(ctx: AuthorityContext, namespace: string | undefined): string | undefined {
  const primaryNamespace = ctx.primary.metadata?.namespace;
  // A cluster-scoped primary may own objects in any namespace, and cluster-scoped ones.
  if (primaryNamespace === undefined) return undefined;
  if (!ctx.targetNamespaced) return `the kind is cluster-scoped and the primary is namespaced (${primaryNamespace})`;
  return namespace === primaryNamespace ? undefined : "outside the primary's namespace";
}

const API_VERSION = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/** "v1", "apps/v1", "app.kubeloop.dev/v1alpha1": a group (DNS subdomain) and a Kubernetes version. */
export function isValidApiVersion(apiVersion: string): boolean {
  return apiVersion.length <= 253 + 20 && API_VERSION.test(apiVersion);
}

/**
 * The first check, before any lookup: the apiVersion is well-formed and the kind is the primary's or an
 * owned one. Only kinds the Loop names (and the router resolved when the Loop started) get any further.
 */
export function checkKind(loop: AuthorityContext['loop'], op: Action['op'], apiVersion: string | undefined, kind: string | undefined): AuthorityVerdict {
  if (typeof apiVersion !== 'string' || !isValidApiVersion(apiVersion)) {
    return { allowed: false, reason: `Loop ${loop.id} may not ${op} ${String(kind)} ${JSON.stringify(apiVersion)}: not a valid apiVersion` };
  }
  const known = (loop.for.apiVersion === apiVersion && loop.for.kind === kind) || isOwnedKind(loop, apiVersion, kind);
  if (!known) return { allowed: false, reason: `Loop ${loop.id} may not ${op} ${String(kind)} ${apiVersion}: neither the primary kind nor an owned kind` };
  return { allowed: true };
}

/**
 * A namespaced Loop writes only in its own namespace: checked on the resolved target before anything else,
 * so a target elsewhere is refused before any API call (not even the live read of an uncached target).
 */
export function checkConfinement(loop: AuthorityContext['loop'], op: Action['op'], target: Partial<ObjectTarget>, targetNamespaced: boolean): AuthorityVerdict {
  if (loop.namespace === undefined) return { allowed: true };
  const problem = writeConfinementProblem(loop.namespace, target, targetNamespaced);
  return problem ? { allowed: false, reason: `Loop ${loop.id} may not ${op} ${describe(target)}: ${problem}` } : { allowed: true };
}

/**
 * Checks one action. Create/apply objects must already carry their namespace (the router fills in the
 * primary's namespace before checking) and must not name a different controller.
 */
export function checkAuthority(ctx: AuthorityContext, action: Action): AuthorityVerdict {
  const loopName = ctx.loop.id;
  const refuse = (what: string): AuthorityVerdict => ({ allowed: false, reason: `Loop ${loopName} may not ${what}` });
  switch (action.op) {
    case 'status':
    case 'event':
      return { allowed: true };
    case 'patch':
    case 'delete': {
      const t = action.target;
      if (isPrimary(ctx, t)) return { allowed: true };
      if (!isOwnedKind(ctx.loop, t.apiVersion, t.kind)) return refuse(`${action.op} ${describe(t)}: not the primary and not an owned kind`);
      const outside = scopeProblem(ctx, t.namespace);
      if (outside) return refuse(`${action.op} ${describe(t)}: ${outside}`);
      const cached = ctx.lookup(t.apiVersion, t.kind, t.namespace, t.name);
      const owner = controllerUid(cached);
      if (cached && owner !== ctx.primary.metadata?.uid) {
        return refuse(`${action.op} ${describe(t)}: it is not controlled by the primary`);
      }
      return { allowed: true };
    }
    case 'create':
    case 'apply': {
      const o = action.object;
      const target = { apiVersion: o.apiVersion, kind: o.kind, namespace: ctx.targetNamespaced ? o.metadata?.namespace : undefined, name: o.metadata?.name };
      if (action.op === 'apply' && isPrimary(ctx, target)) return { allowed: true };
      if (!isOwnedKind(ctx.loop, o.apiVersion, o.kind)) return refuse(`${action.op} ${describe(target)}: not an owned kind`);
      const outside = scopeProblem(ctx, target.namespace);
      if (outside) return refuse(`${action.op} ${describe(target)}: ${outside}`);
      const owner = controllerUid(o);
      if (owner !== undefined && owner !== ctx.primary.metadata?.uid) {
        return refuse(`${action.op} ${describe(target)}: it names another controller`);
      }
      if (action.op === 'apply' && target.name) {
        const cached = ctx.lookup(o.apiVersion ?? '', o.kind ?? '', target.namespace, target.name);
        const cachedOwner = controllerUid(cached);
        if (cached && cachedOwner !== ctx.primary.metadata?.uid) return refuse(`apply ${describe(target)}: it is not controlled by the primary`);
      }
      return { allowed: true };
    }
  }
}
