// Per-member metrics of a sharded router; registered only with --sharding, so a single router's /metrics
// stays as it was. Reconciles per member are the router's own reconcile counters, scraped per pod.
import { counter, gauge, type Registry } from '../../lib/observability/metrics.ts';

export type ShardMetrics = ReturnType<typeof createShardMetrics>;

export function createShardMetrics(registry: Registry) {
  return {
    members: gauge(registry, 'kubeloop_router_shard_members', 'Members of the view this router adopted (0 while it owns nothing)'),
    keysOwned: gauge(registry, 'kubeloop_router_shard_keys_owned', 'Primaries of a Loop this member owns in its adopted view', ['loop']),
    handovers: counter(registry, 'kubeloop_router_shard_handovers_total', 'Views adopted: each one a handover of keys between members'),
    keysGained: counter(registry, 'kubeloop_router_shard_keys_gained_total', 'Keys this member took over and queued from its cache', ['loop']),
    fenced: gauge(registry, 'kubeloop_router_shard_fenced', '1 while this member could not renew its Lease and starts nothing'),
    serverSide: gauge(registry, 'kubeloop_router_shard_server_side', '1 while the API server lists and watches only this member\'s share of the primaries (shardInfo), 0 while the member receives all and filters itself'),
  };
}
