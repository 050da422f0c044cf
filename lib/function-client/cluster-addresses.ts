// What the API server tells about addresses, for the address guard: where the API server itself lives
// (the configured server, the `kubernetes` Service and its EndpointSlices), and where a function's
// Service leads (an ExternalName's target, hand-made EndpointSlices), which DNS alone would not show.
import { isIP } from 'node:net';
import type { V1Service } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/kube-client.ts';
import { compileAddressPolicy, type DeniedEndpoint } from './address-policy.ts';
import { AddressRefusedError, portOf, socketHost, type AddressGuard, type ServiceTargets } from './guarded-connect.ts';
import { isClusterServiceHost, resolveAll } from './service-address.ts';

interface EndpointSliceList {
  items: Array<{ endpoints?: Array<{ addresses?: string[] }>; ports?: Array<{ port?: number }> | null }>;
}

const API_SERVER = 'the Kubernetes API server';
const isLoopback = (address: string): boolean => /^127\./.test(address) || address === '::1';

/** A loopback endpoint is denied on its port only (dev runs functions on loopback too); any other on every port. */
function endpoint(address: string, port: number | undefined): DeniedEndpoint {
  return isLoopback(address) && port !== undefined ? { network: address, port, what: API_SERVER } : { network: address, what: API_SERVER };
}

async function sliceAddresses(client: KubeClient, namespace: string, service: string): Promise<Array<{ address: string; port?: number }>> {
  const slices = await client.request<EndpointSliceList>({
    path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
    query: { labelSelector: `kubernetes.io/service-name=${service}` },
  });
  return slices.items.flatMap((slice) => {
    const ports = (slice.ports ?? []).map((p) => p.port).filter((p): p is number => p !== undefined);
    const addresses = (slice.endpoints ?? []).flatMap((e) => e.addresses ?? []);
    return addresses.flatMap((address) => (ports.length === 0 ? [{ address }] : ports.map((port) => ({ address, port }))));
  });
}

/** The API server's addresses now: the configured server's, the `kubernetes` Service's ClusterIPs and endpoints. */
export async function apiServerEndpoints(client: KubeClient): Promise<DeniedEndpoint[]> {
  const server = new URL(client.server);
  const port = portOf(server);
  const host = socketHost(server);
  // Three independent lookups at once: at start-up they stand before the router's first function call.
  const [resolved, service, slices] = await Promise.all([
    resolveAll(host).catch(() => [] as string[]),
    client.getIfExists<V1Service>({ path: '/api/v1/namespaces/default/services/kubernetes' }).catch(() => undefined),
    sliceAddresses(client, 'default', 'kubernetes').catch(() => []),
  ]);
  const denied = resolved.map((address) => endpoint(address, port));
  for (const ip of service?.spec?.clusterIPs ?? (service?.spec?.clusterIP ? [service.spec.clusterIP] : [])) if (isIP(ip) !== 0) denied.push({ network: ip, what: API_SERVER });
  for (const slice of slices) denied.push(endpoint(slice.address, slice.port));
  return denied;
}

/** Keeps apiServerEndpoints fresh (the control plane's addresses can move); `current()` never waits. */
export class ApiServerEndpoints {
  #current: DeniedEndpoint[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: KubeClient) {}

  get current(): readonly DeniedEndpoint[] {
    return this.#current;
  }

  /** Reads once (so the first call is already guarded), then every `intervalMs`. */
  async start(intervalMs = 60_000): Promise<void> {
    this.#current = await apiServerEndpoints(this.client);
    this.#timer = setInterval(() => {
      apiServerEndpoints(this.client).then((found) => (this.#current = found), () => undefined);
    }, intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * Where a cluster Service host leads, read from the API server: an ExternalName's target (resolved), the
 * ClusterIPs and the EndpointSlices' addresses. Cached for `ttlMs`; it runs when a connection opens,
 * not per call. Other hosts: nothing beyond DNS.
 */
export function serviceTargetsFromApi(client: KubeClient, clusterDomain: string, ttlMs = 5000): ServiceTargets {
  const cache = new Map<string, { at: number; targets: Promise<Array<{ address: string; port?: number }>> }>();
  const targetsOf = (hostname: string, hops: number): Promise<Array<{ address: string; port?: number }>> => {
    if (!isClusterServiceHost(hostname, clusterDomain)) return Promise.resolve([]);
    const hit = cache.get(hostname);
    if (hit && Date.now() - hit.at < ttlMs) return hit.targets;
    const [name = '', namespace = ''] = hostname.toLowerCase().split('.');
    const targets = (async () => {
      const service = await client.getIfExists<V1Service>({ path: `/api/v1/namespaces/${namespace}/services/${name}` });
      if (!service) return [];
      if (service.spec?.type === 'ExternalName') {
        const external = (service.spec.externalName ?? '').replace(/\.$/, '');
        // A name of another Service (kubernetes.default.svc.<domain>): where that one leads, as cluster DNS would.
        if (isClusterServiceHost(external, clusterDomain)) {
          if (hops === 0) throw new AddressRefusedError(`Service ${hostname} starts a chain of ExternalName Services too long to follow; not called`);
          return targetsOf(external, hops - 1);
        }
        return (await resolveAll(external).catch(() => [])).map((address) => ({ address }));
      }
      const clusterIps = (service.spec?.clusterIPs ?? []).filter((ip) => isIP(ip) !== 0).map((address) => ({ address }));
      return [...clusterIps, ...(await sliceAddresses(client, namespace, name))];
    })();
    if (cache.size > 1000) cache.clear();
    cache.set(hostname, { at: Date.now(), targets });
    targets.catch(() => cache.delete(hostname));
    return targets;
  };
  return (hostname) => targetsOf(hostname, 4);
}

export interface ClusterGuardOptions {
  client: KubeClient;
  clusterDomain: string;
  /** `kubeloop dev` and tests only. */
  allowLoopback: boolean;
  /** The operator's deny list and, in dev, the local control plane's ports. */
  denied?: readonly DeniedEndpoint[];
  /** The addresses to connect to (dev: cluster Service hosts to one local address); DNS by default. */
  resolve?: (hostname: string) => Promise<string[]>;
}

/**
 * The guard the router and the gateway connect through: the fixed refusals, the API server's endpoints
 * (kept fresh), the deny list, and everywhere a function's Service leads. Call `apiServer.start()` first.
 */
export function clusterAddressGuard(options: ClusterGuardOptions): { guard: AddressGuard; apiServer: ApiServerEndpoints } {
  const apiServer = new ApiServerEndpoints(options.client);
  const configured = options.denied ?? [];
  let compiledFor: readonly DeniedEndpoint[] | undefined;
  let compiled = compileAddressPolicy({ allowLoopback: options.allowLoopback, denied: configured });
  const guard: AddressGuard = {
    policy: () => {
      if (compiledFor !== apiServer.current) {
        compiledFor = apiServer.current;
        compiled = compileAddressPolicy({ allowLoopback: options.allowLoopback, denied: [...configured, ...apiServer.current] });
      }
      return compiled;
    },
    ...(options.resolve ? { resolve: options.resolve } : {}),
    serviceTargets: serviceTargetsFromApi(options.client, options.clusterDomain),
  };
  return { guard, apiServer };
}
