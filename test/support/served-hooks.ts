// Looking a namespaced hook up in the served table as the gateway's /admit-namespaced/<group> route does
// (webhooks/gateway/admission-gateway.ts), for unit tests of the grouping.
import type { ResolvedHook } from '../../webhooks/base/hook-spec.ts';
import type { ServedHooks } from '../../webhooks/lifecycle/served-hooks.ts';

/** The hook a request on a group's path is for: the one of the request's namespace, if the group has one. */
export function groupHook(served: ServedHooks, group: string, namespace: string | undefined): ResolvedHook | undefined {
  return namespace ? served.groups.get(group)?.get(namespace) : undefined;
}
