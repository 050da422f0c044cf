// The hook controller's decisions (as the router's decide per Loop): from every hook as judged (resolved, its
// ServiceAccount's reviews done), which are registered and what each of the others is told; after the write,
// what each registered hook is told. Pure; hook-controller.ts plans (the reviews) and carries out (the writes).
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { shardConfigurations, type ShardOptions } from './hook-configuration-shards.ts';
import { notReady, registeredCondition } from './hook-status.ts';
import type { ServedHooks } from './served-hooks.ts';
import { createdAt, hooksOverTenantLimit, TENANT_HOOK_LIMIT_REASON } from './tenant-hook-limit.ts';

/** Each hook's one condition this round, by the hook as cached. */
export type Verdicts = Map<AdmissionHook, ConditionInput>;

/** One hook as the plan judged it: resolved, or refused (a bad spec, a namespace never sent, a review's refusal). */
export interface JudgedHook {
  hook: AdmissionHook;
  resolved?: ResolvedHook;
  refusal?: ConditionInput;
}

export interface RegistrationInput {
  judged: readonly JudgedHook[];
  /** Each namespaced hook's slot, as last registered (hook-groups.ts). */
  slots: ReadonlyMap<string, number>;
  shards: ShardOptions;
  /** AdmissionHooks served per namespace, oldest first (--tenant-max-hooks); 0 or undefined: no limit. */
  tenantMaxHooks?: number;
}

export interface Registration {
  /** The hooks to register, by identity. */
  ready: Map<string, ResolvedHook>;
  /** Why each other hook is not registered. */
  verdicts: Verdicts;
}

/**
 * Which hooks are registered: the judged ones not refused, less the largest tenant's hooks in a tenant
 * configuration over its byte bound (never the others') and each namespace's newest past --tenant-max-hooks.
 */
export function decideRegistration(input: RegistrationInput): Registration {
  const ready = new Map<string, ResolvedHook>();
  const verdicts: Verdicts = new Map();
  const objects = new Map<string, AdmissionHook>();
  for (const { hook, resolved, refusal } of input.judged) {
    if (refusal) verdicts.set(hook, refusal);
    else if (resolved) ready.set(resolved.id, resolved);
    if (resolved) objects.set(resolved.id, hook);
  }
  const leaveOut = (id: string, condition: (object: AdmissionHook) => ConditionInput) => {
    const object = objects.get(id);
    ready.delete(id);
    if (object) verdicts.set(object, condition(object));
  };
  for (const [id, message] of shardConfigurations(ready.values(), input.slots, input.shards).leftOut) {
    const generation = ready.get(id)?.generation;
    leaveOut(id, () => notReady('InvalidSpec', message, generation));
  }
  if (input.tenantMaxHooks) {
    for (const [id, message] of hooksOverTenantLimit(ready.values(), input.tenantMaxHooks, (hook) => createdAt(objects.get(hook.id)))) {
      leaveOut(id, (object) => notReady(TENANT_HOOK_LIMIT_REASON, message, object.metadata?.generation));
    }
  }
  return { ready, verdicts };
}

/**
 * What each hook served after the write is told: Ready with its configuration, or ContextPending while its
 * context cache has not synced (its requests get its failurePolicy until it has). Hooks with a verdict keep it.
 */
export function registeredVerdicts(hooks: readonly AdmissionHook[], served: ServedHooks, verdicts: Verdicts, pending: (hook: ResolvedHook) => string | undefined, configurationOf: (hook: ResolvedHook) => string): Verdicts {
  const all: Verdicts = new Map(verdicts);
  for (const hook of hooks) {
    const resolved = served.byId.get(objectKey(hook.metadata));
    if (!resolved || all.has(hook)) continue;
    const waiting = pending(resolved);
    all.set(hook, waiting
      ? notReady('ContextPending', `registered; until its context is cached every request gets failurePolicy ${resolved.spec.failurePolicy}: ${waiting}`, hook.metadata?.generation)
      : registeredCondition(resolved, configurationOf(resolved), hook.metadata?.generation));
  }
  return all;
}
