// The router and the webhook gateway as local processes, wired as dev wires them: loopback functions allowed
// (except the control plane's own ports), the local Services' addresses (--connect-services-to) and, on dev's
// own control plane, only its API server may call the gateway. Shared by `kubeloop dev` and kubeloop/testing/cluster.
import { gatewayClientAuthArgs } from '../cluster/webhook-client-auth.ts';
import { ROUTER_NODE_FLAGS } from '../node-flags.ts';
import { startLocalProcess, type LocalProcess } from './local-processes.ts';

export interface LocalPlatformWiring {
  /** The kubeconfig the process acts with (dev: the chart's ServiceAccount's). */
  kubeconfig: string;
  /** --connect-services-to entries (name.namespace=IP) of the Services that lead to local processes. */
  connectEntries: string[];
  /** The local control plane (its ports are refused as function targets; its pki authenticates the gateway's callers). */
  plane?: { dir: string; ports: number[] };
  logDir: string;
}

function sharedArgs(wiring: LocalPlatformWiring): string[] {
  const connect = wiring.connectEntries.length > 0 ? [`--connect-services-to=${wiring.connectEntries.join(',')}`] : [];
  // Loopback is allowed in dev, except the local control plane's own ports (etcd above all).
  return [...connect, ...(wiring.plane?.ports ?? []).map((port) => `--deny-loopback-port=${port}`)];
}

/** `kubeloop router` in dev mode: its functions listen on 127.0.0.1, which the router refuses outside it. */
export function startLocalRouter(wiring: LocalPlatformWiring, extraArgs: string[] = []): Promise<LocalProcess> {
  return startLocalProcess({ name: 'router', args: ['router', `--kubeconfig=${wiring.kubeconfig}`, '--allow-loopback-functions', ...sharedArgs(wiring), ...extraArgs], nodeFlags: ROUTER_NODE_FLAGS, logDir: wiring.logDir });
}

/** `kubeloop webhook --dev`, serving kubeloop's namespace's webhook configurations. */
export function startLocalGateway(wiring: LocalPlatformWiring, namespace: string, extraArgs: string[] = []): Promise<LocalProcess> {
  return startLocalProcess({
    name: 'webhook',
    // On its own control plane, only that API server (its webhook client certificate) may call the gateway.
    args: ['webhook', '--dev', `--kubeconfig=${wiring.kubeconfig}`, `--namespace=${namespace}`, ...(wiring.plane ? gatewayClientAuthArgs(wiring.plane.dir) : []), ...sharedArgs(wiring), ...extraArgs],
    scheme: 'https',
    opsPort: true,
    logDir: wiring.logDir,
  });
}
