// The address classifier: what a name resolves to decides, whatever the name says.
import { describe, expect, it } from 'vitest';
import { addressProblem, compileAddressPolicy, networkList, operatorDenied, readDeniedLoopbackPorts, readDeniedNetworks } from './address-policy.ts';

const cluster = compileAddressPolicy({
  allowLoopback: false,
  denied: [
    { network: '10.96.0.1', what: 'the Kubernetes API server' },
    { network: '172.18.0.2', port: 6443, what: 'the Kubernetes API server' },
    { network: '192.168.100.0/24', what: 'denied by the operator (functionClient.deniedNetworks)' },
  ],
});
const dev = compileAddressPolicy({ allowLoopback: true, denied: [{ network: '127.0.0.1', port: 6443, what: 'the local control plane' }] });

describe('addressProblem', () => {
  it.each([
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.96.0.1', 'API server'],
    ['192.168.100.7', 'denied by the operator'],
  ])('refuses %s in a cluster (%s)', (address, why) => {
    expect(addressProblem(address, 8080, cluster)).toContain(why);
  });

  it('accepts Pod and Service addresses, and honours ports on a denied endpoint', () => {
    expect(addressProblem('10.244.1.7', 8080, cluster)).toBeUndefined();
    expect(addressProblem('10.96.12.4', 80, cluster)).toBeUndefined();
    expect(addressProblem('172.18.0.2', 8080, cluster)).toBeUndefined();
    expect(addressProblem('172.18.0.2', 6443, cluster)).toContain('API server');
    expect(addressProblem('2001:db8::1', 443, cluster)).toBeUndefined();
  });

  it('in dev allows loopback except the control plane ports, and still refuses metadata', () => {
    expect(addressProblem('127.0.0.1', 8080, dev)).toBeUndefined();
    expect(addressProblem('127.0.0.1', 6443, dev)).toContain('local control plane');
    expect(addressProblem('169.254.169.254', 80, dev)).toContain('link-local');
  });

  it('refuses a malformed deny-list entry by name', () => {
    expect(() => networkList('10.0.0.0/33')).toThrow(/"10.0.0.0\/33" has a prefix outside 0..32/);
    expect(() => networkList('metadata')).toThrow(/not an IP address/);
  });
});

describe('the deny list settings', () => {
  it('reads flags before the environment and names a bad entry', () => {
    expect(readDeniedNetworks(['10.0.0.0/24'], { KUBELOOP_DENY_FUNCTION_NETWORKS: '192.168.0.0/16' })).toEqual(['10.0.0.0/24']);
    expect(readDeniedNetworks(undefined, { KUBELOOP_DENY_FUNCTION_NETWORKS: '192.168.0.0/16, fd00::/8' })).toEqual(['192.168.0.0/16', 'fd00::/8']);
    expect(() => readDeniedNetworks(undefined, { KUBELOOP_DENY_FUNCTION_NETWORKS: 'nodes' })).toThrow(/KUBELOOP_DENY_FUNCTION_NETWORKS: "nodes" is not an IP address/);
    expect(() => readDeniedLoopbackPorts(['2379', '70000'])).toThrow(/--deny-loopback-port: "70000" is not a port/);
  });

  it("refuses the local control plane's loopback ports in dev, and only those", () => {
    const policy = compileAddressPolicy({ allowLoopback: true, denied: operatorDenied(['10.1.0.0/16'], readDeniedLoopbackPorts(['2379'])) });
    expect(addressProblem('127.0.0.1', 2379, policy)).toContain('a port of the local control plane');
    expect(addressProblem('::1', 2379, policy)).toContain('a port of the local control plane');
    expect(addressProblem('127.0.0.1', 8080, policy)).toBeUndefined();
    expect(addressProblem('10.1.2.3', 8080, policy)).toContain('denied by the operator');
  });
});
