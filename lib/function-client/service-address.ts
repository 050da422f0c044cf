// `--connect-services-to <address>`: for a router outside the cluster (kubeloop dev, e2e tests), calls to a
// cluster Service host (<svc>.<ns>.svc[.<domain>], what spec.function.ref resolves to) connect to one
// local address instead of asking DNS, keeping the port; every other host resolves as usual.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface ServiceAddressOverride {
  clusterDomain: string;
  /** An IPv4 or IPv6 address, e.g. 127.0.0.1. */
  address: string;
}

export function isClusterServiceHost(host: string, clusterDomain: string): boolean {
  const lower = host.toLowerCase();
  const parts = lower.split('.');
  return (parts.length === 3 && parts[2] === 'svc') || (parts.length > 3 && parts[2] === 'svc' && parts.slice(3).join('.') === clusterDomain.toLowerCase());
}

/** Every address DNS gives for a name (an IP literal is its own answer). */
export async function resolveAll(hostname: string): Promise<string[]> {
  if (isIP(hostname) !== 0) return [hostname];
  return (await dnsLookup(hostname, { all: true })).map((entry) => entry.address);
}

/** The addresses a host is connected to: `address` for cluster Service hosts, DNS for the rest. */
export function serviceAddressResolver(override: ServiceAddressOverride): (hostname: string) => Promise<string[]> {
  if (isIP(override.address) === 0) throw new Error(`--connect-services-to: "${override.address}" is not an IP address`);
  return async (hostname) => (isClusterServiceHost(hostname, override.clusterDomain) ? [override.address] : resolveAll(hostname));
}
