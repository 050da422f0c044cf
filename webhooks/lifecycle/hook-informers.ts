// Where HookController reads ClusterAdmissionHooks and AdmissionHooks from: informers on the API server, or
// any source of the same shape (the unit tests' in-memory informers, as the router's LoopController takes its
// InformerSource), so the controller's decisions and writes are tested without an API server.
import type { Logger } from 'pino';
import {
  ADMISSION_HOOK_API_VERSION,
  ADMISSION_HOOK_GROUP,
  ADMISSION_HOOK_KIND,
  ADMISSION_HOOK_PLURAL,
  ADMISSION_HOOK_VERSION,
  CLUSTER_ADMISSION_HOOK_KIND,
  CLUSTER_ADMISSION_HOOK_PLURAL,
  type AdmissionHook,
} from '../../api/admission-hook.ts';
import { Informer, type KubeClient, type ResourceInfo } from '../../lib/kube/index.ts';
import type { InformerHandlers } from '../../lib/kube/informer.ts';

export const CLUSTER_ADMISSION_HOOK_RESOURCE: ResourceInfo = {
  group: ADMISSION_HOOK_GROUP,
  version: ADMISSION_HOOK_VERSION,
  apiVersion: ADMISSION_HOOK_API_VERSION,
  kind: CLUSTER_ADMISSION_HOOK_KIND,
  plural: CLUSTER_ADMISSION_HOOK_PLURAL,
  namespaced: false,
};

export const NAMESPACED_ADMISSION_HOOK_RESOURCE: ResourceInfo = { ...CLUSTER_ADMISSION_HOOK_RESOURCE, kind: ADMISSION_HOOK_KIND, plural: ADMISSION_HOOK_PLURAL, namespaced: true };

/** What the controller reads hooks through: an Informer, or an in-memory one in unit tests (test/support/memory-informers.ts). */
export interface HookInformer {
  readonly store: { list(): AdmissionHook[]; get(key: string): AdmissionHook | undefined };
  readonly hasSynced: boolean;
  on<E extends 'add' | 'update' | 'delete'>(event: E, handler: InformerHandlers<AdmissionHook>[E]): unknown;
  start(): unknown;
  waitForSync(): Promise<void>;
  stop(): Promise<void>;
}

/** Makes the informer of one hook kind (as the router's InformerSource hands out its informers). */
export type HookInformerSource = (resource: ResourceInfo, options: { labelSelector?: string; logger: Logger }) => HookInformer;

/** The API server's informers, read through `client`. */
export function informersOn(client: KubeClient): HookInformerSource {
  return (resource, options) => new Informer<AdmissionHook>({ client, resource, ...options });
}
