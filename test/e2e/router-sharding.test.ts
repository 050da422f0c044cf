// Sharded routers on the shared (current) control plane: from Kubernetes 1.36 the API server lists and
// watches each member's share (server-side sharded list and watch, KEP-5866); scenarios in sharding-scenarios.ts.
import { hasShardedListAndWatch, kubernetesVersion } from '../../cli/cluster/versions.ts';
import { shardingScenarios } from './sharding-scenarios.ts';

shardingScenarios({ suite: 'router-sharding', mode: hasShardedListAndWatch(kubernetesVersion()) ? 'server' : 'client' });
