// The member Lease of a sharded router: its name, the labels that make `kubectl get leases` a status
// view of the shard, and reading a listing into liveness records.
import type { V1Lease } from '@kubernetes/client-node';
import type { MemberLeaseRecord } from './liveness.ts';

/** Selects a group's member Leases: value is the group (the router's --lease-name). */
export const SHARD_GROUP_LABEL = 'kubeloop.dev/router-shard-group';
/** The view this member adopted: every member showing the same value agrees on who owns what. */
export const SHARD_VIEW_LABEL = 'kubeloop.dev/shard-view';
/** The view this member acknowledged: it no longer starts keys that belong to others in that view. */
export const SHARD_ACK_LABEL = 'kubeloop.dev/shard-ack';
/** Primaries this member owns in its adopted view, over all Loops. */
export const SHARD_KEYS_LABEL = 'kubeloop.dev/shard-keys';
export const SHARD_MEMBERS_LABEL = 'kubeloop.dev/shard-members';
/** `server` while the API server filters this member's primaries to its share, `client` while it filters them itself. */
export const SHARD_MODE_LABEL = 'kubeloop.dev/shard-mode';

/** `<group>-member-<identity>`, lower-cased into a valid object name. */
export function memberLeaseName(group: string, identity: string): string {
  const safe = identity.toLowerCase().replace(/[^a-z0-9.-]+/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return `${group}-member-${safe || 'x'}`.slice(0, 253).replace(/[^a-z0-9]+$/, '');
}

/** What liveness reads of a member Lease; its leaseDurationSeconds is deliberately not among it (liveness.ts). */
export function leaseRecord(lease: V1Lease): MemberLeaseRecord {
  const spec = lease.spec ?? {};
  return {
    name: lease.metadata?.name ?? '',
    holder: spec.holderIdentity ?? '',
    renewal: `${String(spec.renewTime ?? '')}/${lease.metadata?.resourceVersion ?? ''}`,
    ack: lease.metadata?.labels?.[SHARD_ACK_LABEL],
  };
}

