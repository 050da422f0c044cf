// Which webhook configuration objects the gateway writes: the ClusterAdmissionHooks' pair under the configured
// name, and the namespaced hooks' entries in tenant configurations, one pair per bucket of namespaces (a
// namespace's hash), each bounded in bytes. A bucket over its bound leaves out the hooks of the tenant that
// takes the most of it (InvalidSpec), never the other tenants' and never the cluster hooks'. Tenant
// configurations are named to sort before the cluster one: the API server calls mutating webhooks in the
// order of their configurations' names, so a ClusterAdmissionHook's mutation comes last and stands. Pure.
import type { V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { fnv1a64 } from '../../lib/kube/shard-selector.ts';
import { buildHookConfigurations, type HookConfigurationOptions } from './hook-configuration.ts';
import { groupNamespacedHooks, type HookGroup } from '../base/hook-groups.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

/** Default of --tenant-configurations: buckets of namespaces, each its own pair of configuration objects. */
export const DEFAULT_TENANT_CONFIGURATIONS = 16;
/** Default of --max-configuration-bytes: well under etcd's 1.5 MiB per object, whatever the API server adds. */
export const DEFAULT_MAX_CONFIGURATION_BYTES = 512 * 1024;
/** Label on every configuration the gateway writes, naming the cluster configuration: how stale ones are found. */
export const HOOK_CONFIGURATION_LABEL = 'kubeloop.dev/hook-configuration';

/** The label's value for a cluster configuration name: the name, or a hash of it when longer than a label value may be. */
/** The selector of every configuration a gateway writes: its list of an earlier run's, and its watch. */
export function configurationLabelSelector(clusterName: string): string {
  return `${HOOK_CONFIGURATION_LABEL}=${configurationLabelValue(clusterName)}`;
}

export function configurationLabelValue(clusterName: string): string {
  if (clusterName.length <= 63) return clusterName;
  const { hi, lo } = fnv1a64(clusterName);
  return `${clusterName.slice(0, 46)}-${(hi >>> 0).toString(16).padStart(8, '0')}${(lo >>> 0).toString(16).padStart(8, '0')}`;
}

/** The bucket of a namespace: the low 32 bits of its FNV-1a hash, modulo the number of buckets. */
export function tenantBucket(namespace: string, buckets: number): number {
  return (fnv1a64(namespace).lo >>> 0) % buckets;
}

/**
 * The name of bucket `bucket`'s configurations. "0-" sorts before any name starting with a letter, so the
 * tenants' mutating entries run before the cluster hooks' (the API server sorts configurations by name).
 */
export function tenantConfigurationName(clusterName: string, bucket: number): string {
  return `0-${clusterName}-tenants-${bucket}`;
}

/** Throws unless every tenant configuration sorts before the cluster configuration (a name starting "0-0" would not). */
export function checkConfigurationName(clusterName: string, buckets: number): void {
  for (let bucket = 0; bucket < buckets; bucket += 1) {
    const name = tenantConfigurationName(clusterName, bucket);
    if (!(name < clusterName) || name.length > 253) throw new Error(`--hook-configuration: "${clusterName}" must sort after its tenant configurations ("${name}") and leave room for them (253 characters): start it with a letter`);
  }
}

export interface ConfigurationPair {
  name: string;
  mutating: V1MutatingWebhookConfiguration;
  validating: V1ValidatingWebhookConfiguration;
}

export interface ShardedConfigurations {
  /** The cluster pair first, then one pair per bucket holding entries. */
  pairs: ConfigurationPair[];
  /** The namespaced hooks grouped as written (bucketed ids), for the served table. */
  groups: HookGroup[];
  /** Hooks left out because their bucket was over its bound, with the message for their InvalidSpec. */
  leftOut: Map<string, string>;
  /** Each namespaced hook's slot, to keep next time (hook-groups.ts). */
  slots: Map<string, number>;
}

export interface ShardOptions extends HookConfigurationOptions {
  buckets: number;
  maxBytes: number;
}

const bytesOf = (object: unknown): number => Buffer.byteLength(JSON.stringify(object));

function withLabel(pair: ConfigurationPair, clusterName: string): ConfigurationPair {
  const label = (metadata: { labels?: Record<string, string> } | undefined) => ({ ...metadata, labels: { ...metadata?.labels, [HOOK_CONFIGURATION_LABEL]: configurationLabelValue(clusterName) } });
  return { name: pair.name, mutating: { ...pair.mutating, metadata: label(pair.mutating.metadata) }, validating: { ...pair.validating, metadata: label(pair.validating.metadata) } };
}

/** What a hook costs its bucket: its entry as if alone (a shared entry costs less; this is the upper bound). */
function entryBytes(hook: ResolvedHook, options: HookConfigurationOptions): number {
  const { groups } = groupNamespacedHooks([hook]);
  const alone = buildHookConfigurations([], options, groups);
  return bytesOf(hook.spec.type === 'mutating' ? alone.mutating.webhooks : alone.validating.webhooks);
}

/** One bucket's pair, leaving out the largest hooks of the tenant taking the most bytes until it fits. */
function packBucket(hooks: ResolvedHook[], bucket: number, slots: ReadonlyMap<string, number>, options: ShardOptions, leftOut: Map<string, string>) {
  const name = tenantConfigurationName(options.name, bucket);
  const costs = new Map(hooks.map((hook) => [hook.id, entryBytes(hook, options)]));
  let kept = hooks;
  for (;;) {
    const grouping = groupNamespacedHooks(kept, slots, () => bucket);
    const built = buildHookConfigurations([], { ...options, name }, grouping.groups);
    const size = Math.max(bytesOf(built.mutating), bytesOf(built.validating));
    if (size <= options.maxBytes || kept.length === 0) return { pair: { name, ...built }, grouping };
    const byTenant = new Map<string, number>();
    for (const hook of kept) byTenant.set(hook.namespace!, (byTenant.get(hook.namespace!) ?? 0) + costs.get(hook.id)!);
    const [tenant, tenantBytes] = [...byTenant].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    const largest = kept.filter((hook) => hook.namespace === tenant).sort((a, b) => costs.get(b.id)! - costs.get(a.id)! || a.id.localeCompare(b.id))[0]!;
    leftOut.set(
      largest.id,
      `left out of webhook configuration ${name}: it would take ${size} bytes, over the ${options.maxBytes} bytes one configuration may hold (--max-configuration-bytes); namespace ${tenant}'s hooks take ${tenantBytes} of them, the most of any namespace there, and this hook's entry ${costs.get(largest.id)}: make its rules, selectors and matchConditions smaller`,
    );
    kept = kept.filter((hook) => hook !== largest);
  }
}

/** Every configuration pair the hooks need; buckets without entries are absent (the caller deletes them). */
export function shardConfigurations(hooks: Iterable<ResolvedHook>, slots: ReadonlyMap<string, number>, options: ShardOptions): ShardedConfigurations {
  const list = [...hooks];
  const cluster = buildHookConfigurations(list.filter((hook) => !hook.namespace), options);
  const pairs: ConfigurationPair[] = [withLabel({ name: options.name, ...cluster }, options.name)];
  const byBucket = new Map<number, ResolvedHook[]>();
  for (const hook of list) {
    if (!hook.namespace) continue;
    const bucket = tenantBucket(hook.namespace, options.buckets);
    byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), hook]);
  }
  const leftOut = new Map<string, string>();
  const groups: HookGroup[] = [];
  const nextSlots = new Map<string, number>();
  for (const [bucket, members] of [...byBucket].sort((a, b) => a[0] - b[0])) {
    const { pair, grouping } = packBucket(members, bucket, slots, options, leftOut);
    if (grouping.groups.length > 0) pairs.push(withLabel(pair, options.name));
    groups.push(...grouping.groups);
    for (const [key, slot] of grouping.slots) nextSlots.set(key, slot);
  }
  return { pairs, groups, leftOut, slots: nextSlots };
}
