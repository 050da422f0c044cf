// `--connect-services-to <addresses>`: for a router or gateway outside the cluster (kubeloop dev, e2e tests),
// calls to a cluster Service host (<svc>.<ns>.svc[.<domain>], what spec.function.ref and a hook's
// function.service resolve to) connect to a local address instead of asking DNS, keeping the port; every
// other host resolves as usual. One IP sends every Service there; `name.namespace=IP` entries send one
// Service to its own address (kubeloop dev: each local function on its own loopback IP, at its Service's port).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface ServiceAddressOverride {
  clusterDomain: string;
  /** "127.0.0.1", or "name.namespace=127.0.0.2,..." (optionally with one bare IP for every other Service). */
  address: string;
}

export interface ServiceAddresses {
  /** Where Services without an entry go (none: DNS, as in a cluster). */
  fallback?: string;
  /** "name.namespace" -> IP. */
  services: Map<string, string>;
}

/** Parses the flag's value; an error names the setting and the bad entry. */
export function parseServiceAddresses(value: string, setting = '--connect-services-to'): ServiceAddresses {
  const out: ServiceAddresses = { services: new Map() };
  for (const entry of value.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [service, address] = entry.includes('=') ? entry.split('=', 2) : [undefined, entry];
    if (!address || isIP(address) === 0) throw new Error(`${setting}: "${address ?? entry}" is not an IP address (want IP or name.namespace=IP)`);
    if (service === undefined) {
      if (out.fallback !== undefined) throw new Error(`${setting}: more than one address for every Service ("${out.fallback}", "${address}")`);
      out.fallback = address;
    } else if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(service)) {
      throw new Error(`${setting}: "${service}" is not name.namespace of a Service`);
    } else out.services.set(service, address);
  }
  if (out.fallback === undefined && out.services.size === 0) throw new Error(`${setting}: no address given`);
  return out;
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

/** The addresses a host is connected to: the override for cluster Service hosts, DNS for the rest. */
export function serviceAddressResolver(override: ServiceAddressOverride): (hostname: string) => Promise<string[]> {
  const { fallback, services } = parseServiceAddresses(override.address);
  return async (hostname) => {
    if (!isClusterServiceHost(hostname, override.clusterDomain)) return resolveAll(hostname);
    const [name, namespace] = hostname.toLowerCase().split('.');
    const address = services.get(`${name ?? ''}.${namespace ?? ''}`) ?? fallback;
    return address === undefined ? resolveAll(hostname) : [address];
  };
}
