// `--connect-services-to <address>`: for a router outside the cluster (kubeloop dev, e2e tests), calls to a
// cluster Service host (<svc>.<ns>.svc[.<domain>], what spec.function.ref resolves to) connect to one
// local address instead of asking DNS, keeping the port; every other host resolves as usual.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
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

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup replacement for net.connect that answers `address` for cluster Service hosts. */
export function serviceAddressLookup(override: ServiceAddressOverride) {
  const family = isIP(override.address);
  if (family === 0) throw new Error(`--connect-services-to: "${override.address}" is not an IP address`);
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (!isClusterServiceHost(hostname, override.clusterDomain)) {
      dnsLookup(hostname, options, callback as never);
      return;
    }
    if (options.all) callback(null, [{ address: override.address, family }]);
    else callback(null, override.address, family);
  };
}
