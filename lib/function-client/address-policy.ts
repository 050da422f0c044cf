// Which addresses a function call may connect to, judged on the address itself (after DNS), not the name:
// never link-local (cloud metadata), unspecified, multicast or broadcast, never the API server's endpoints
// or an operator's denied networks, loopback only in `kubeloop dev` and there never the control plane's ports.
import { BlockList, isIP } from 'node:net';

export interface DeniedEndpoint {
  /** An address or a CIDR network ("10.0.0.1", "10.96.0.0/12", "fd00::/8"). */
  network: string;
  /** Only this port of it; all ports when absent. */
  port?: number;
  /** Why, as it appears in the Loop's status: a fixed phrase, e.g. "the Kubernetes API server". */
  what: string;
}

export interface AddressPolicy {
  /** `kubeloop dev` and tests: functions on 127.0.0.1. Never in a cluster. */
  allowLoopback: boolean;
  /** Networks and endpoints no call may reach: the operator's deny list, the API server's endpoints. */
  denied: readonly DeniedEndpoint[];
}

const ALWAYS_REFUSED: ReadonlyArray<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address (cloud metadata lives there)'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['255.255.255.255', 32, 'ipv4', 'the broadcast address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['fe80::', 10, 'ipv6', 'a link-local address (cloud metadata lives there)'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];
const LOOPBACK: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
];

function subnet(list: BlockList, address: string, prefix: number, type: 'ipv4' | 'ipv6'): BlockList {
  list.addSubnet(address, prefix, type);
  return list;
}

// Built on first use, not at import: a BlockList is a native handle, which a V8 startup snapshot of the router
// (cli/build-snapshot.js) cannot hold.
let fixedLists: ReadonlyArray<{ list: BlockList; what: string }> | undefined;
let loopbackList: BlockList | undefined;
const fixed = () => (fixedLists ??= ALWAYS_REFUSED.map(([address, prefix, type, what]) => ({ list: subnet(new BlockList(), address, prefix, type), what })));
const loopback = () => (loopbackList ??= LOOPBACK.reduce((list, [address, prefix, type]) => subnet(list, address, prefix, type), new BlockList()));

/** ::ffff:a.b.c.d is a.b.c.d: judged as IPv4, so a mapped address cannot slip past an IPv4 rule. */
export function normaliseAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address.toLowerCase();
}

function typeOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** Parses "a.b.c.d", "a.b.c.d/n", "x::y/n" into a one-entry BlockList; throws with the bad entry named. */
export function networkList(network: string): BlockList {
  const [address = '', prefixText] = network.split('/');
  const family = isIP(address);
  if (family === 0) throw new Error(`"${network}" is not an IP address or CIDR network`);
  const bits = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) throw new Error(`"${network}" has a prefix outside 0..${bits}`);
  return subnet(new BlockList(), normaliseAddress(address), prefix, family === 4 ? 'ipv4' : 'ipv6');
}

/** A policy with its networks parsed once. */
export interface CompiledAddressPolicy {
  allowLoopback: boolean;
  denied: ReadonlyArray<{ list: BlockList; port?: number; what: string }>;
}

export function compileAddressPolicy(policy: AddressPolicy): CompiledAddressPolicy {
  return {
    allowLoopback: policy.allowLoopback,
    denied: policy.denied.map((entry) => ({ list: networkList(entry.network), what: entry.what, ...(entry.port !== undefined ? { port: entry.port } : {}) })),
  };
}

/** A refused address: what was refused (an address, or address:port) and the fixed phrase saying why. */
export interface AddressRefusal {
  target: string;
  what: string;
}

/** Why a call may not connect to `address`:`port`, or undefined when it may. */
export function addressRefusal(rawAddress: string, port: number, policy: CompiledAddressPolicy): AddressRefusal | undefined {
  const address = normaliseAddress(rawAddress);
  if (isIP(address) === 0) return { target: rawAddress, what: 'not an IP address' };
  const type = typeOf(address);
  for (const rule of fixed()) if (rule.list.check(address, type)) return { target: address, what: rule.what };
  for (const rule of policy.denied) {
    if ((rule.port === undefined || rule.port === port) && rule.list.check(address, type)) return { target: `${address}:${port}`, what: rule.what };
  }
  if (loopback().check(address, type) && !policy.allowLoopback) return { target: address, what: 'loopback (allowed only in kubeloop dev)' };
  return undefined;
}

/** addressRefusal as one phrase, "169.254.169.254 is a link-local address (...)". */
export function addressProblem(address: string, port: number, policy: CompiledAddressPolicy): string | undefined {
  const refusal = addressRefusal(address, port, policy);
  return refusal && `${refusal.target} is ${refusal.what}`;
}

/** `--deny-function-network` (repeatable) or KUBELOOP_DENY_FUNCTION_NETWORKS (comma-separated), checked at start-up. */
export function readDeniedNetworks(flags: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.KUBELOOP_DENY_FUNCTION_NETWORKS ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const [source, entries] = flags && flags.length > 0 ? ['--deny-function-network', flags] : ['KUBELOOP_DENY_FUNCTION_NETWORKS', fromEnv];
  for (const entry of entries) {
    try {
      networkList(entry);
    } catch (error) {
      throw new Error(`${source}: ${(error as Error).message}`);
    }
  }
  return [...entries];
}

/** `--deny-loopback-port` (repeatable): in dev, the local control plane's ports (`kubeloop dev` passes them). */
export function readDeniedLoopbackPorts(flags: readonly string[] | undefined): number[] {
  return (flags ?? []).map((text) => {
    const port = Number(text);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`--deny-loopback-port: "${text}" is not a port`);
    return port;
  });
}

/** The deny list and the control plane's loopback ports as the policy's entries. */
export function operatorDenied(networks: readonly string[], loopbackPorts: readonly number[] = []): DeniedEndpoint[] {
  return [
    ...networks.map((network) => ({ network, what: 'denied by the operator (--deny-function-network)' })),
    ...loopbackPorts.flatMap((port) => ['127.0.0.0/8', '::1'].map((network) => ({ network, port, what: 'a port of the local control plane' }))),
  ];
}
