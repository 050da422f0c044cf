// --connect-services-to: one address for every Service, or one per Service (kubeloop dev's local functions).
import { describe, expect, it } from 'vitest';
import { parseServiceAddresses, serviceAddressResolver } from './service-address.ts';

describe('--connect-services-to', () => {
  it('sends each named Service to its own address and the others to the bare IP', async () => {
    const resolve = serviceAddressResolver({ clusterDomain: 'cluster.local', address: 'web.team-a=127.0.0.2, 127.0.0.1' });
    expect(await resolve('web.team-a.svc')).toEqual(['127.0.0.2']);
    expect(await resolve('web.team-a.svc.cluster.local')).toEqual(['127.0.0.2']);
    expect(await resolve('web.team-b.svc')).toEqual(['127.0.0.1']);
    expect(await resolve('127.0.0.9')).toEqual(['127.0.0.9']);
  });

  it('names the bad entry', () => {
    expect(() => parseServiceAddresses('web.team-a=localhost')).toThrow('--connect-services-to: "localhost" is not an IP address (want IP or name.namespace=IP)');
    expect(() => parseServiceAddresses('web=127.0.0.2')).toThrow('"web" is not name.namespace of a Service');
    expect(() => parseServiceAddresses('127.0.0.1,127.0.0.2')).toThrow('more than one address');
    expect(() => parseServiceAddresses(' ')).toThrow('no address given');
  });
});
