// Connects to a function only at an address the policy allows: the name is resolved here, at connect time,
// every address it gives (and every address its Service leads to) is checked, and the socket is opened to
// the checked address itself, so DNS cannot answer differently between the check and the connect.
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { addressRefusal, type CompiledAddressPolicy } from './address-policy.ts';
import { resolveAll } from './service-address.ts';

/** Where a Service leads beyond its own address: an ExternalName's target, its endpoints (service-targets.ts). */
export type ServiceTargets = (hostname: string) => Promise<Array<{ address: string; port?: number }>>;

export interface AddressGuard {
  /** Read on every connect: the API server's endpoints are refreshed while the process runs. */
  policy: () => CompiledAddressPolicy;
  /** The addresses to connect to (default: DNS, every address). */
  resolve?: (hostname: string) => Promise<string[]>;
  serviceTargets?: ServiceTargets;
}

/** The port a connection goes to: the one given, or its scheme's default (a URL without one says ''). */
export function portOf(target: { protocol: string; port?: string | number | null | undefined }): number {
  return Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
}

/** A URL's host as a socket takes it: an IPv6 address without its brackets. */
export function socketHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** A connection refused by the address policy; its message is the fixed reason shown in status. */
export class AddressRefusedError extends Error {
  readonly code = 'KUBELOOP_ADDRESS_REFUSED';
}

/** The address to connect to for `hostname`:`port`, or an AddressRefusedError naming why not. */
export async function checkedAddress(guard: AddressGuard, hostname: string, port: number): Promise<string> {
  const addresses = await (guard.resolve ?? resolveAll)(hostname);
  const targets = guard.serviceTargets ? await guard.serviceTargets(hostname) : [];
  const policy = guard.policy();
  for (const address of addresses) {
    const refused = addressRefusal(address, port, policy);
    if (!refused) continue;
    if (isIP(hostname) !== 0) throw new AddressRefusedError(`${refused.target} is ${refused.what}; not called`);
    throw new AddressRefusedError(`${hostname} resolves to ${refused.target}, ${refused.what}; not called`);
  }
  for (const target of targets) {
    const refused = addressRefusal(target.address, target.port ?? port, policy);
    if (refused) throw new AddressRefusedError(`Service ${hostname} leads to ${refused.target}, ${refused.what}; not called`);
  }
  const first = addresses[0];
  if (first === undefined) throw new AddressRefusedError(`${hostname} resolves to no address`);
  return first;
}

/** An undici connector that connects only to checked addresses, keeping the name for TLS (SNI, certificate). */
export function guardedConnector(guard: AddressGuard, tls: buildConnector.BuildOptions = {}): buildConnector.connector {
  const connect = buildConnector(tls);
  return (options, callback) => {
    const port = portOf(options);
    const name = options.hostname;
    checkedAddress(guard, name, port).then(
      (address) => connect({ ...options, hostname: address, ...(isIP(name) === 0 && options.protocol === 'https:' ? { servername: options.servername ?? name } : {}) }, callback),
      (error: Error) => callback(error, null),
    );
  };
}
