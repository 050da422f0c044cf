// A project's Service on kubeloop dev: its own loopback address at the Service's port, forwarding to the
// function's current process, closing connections while none runs.
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServiceAddress, type LocalServiceAddress } from './service-address.ts';

let address: LocalServiceAddress | undefined;
afterEach(async () => address?.close());

async function backend(reply: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => res.end(reply));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('a Service address on kubeloop dev', () => {
  it('forwards to the process it points at, follows a reload, and refuses while nothing runs', async () => {
    address = await startServiceAddress({ name: 'web', namespace: 'team-a', port: 0 });
    expect(address.host).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(address.host).not.toBe('127.0.0.1');
    expect(address.entry).toBe(`web.team-a=${address.host}`);
    const url = `http://${address.host}:${address.port()}/`;
    await expect(fetch(url)).rejects.toThrow();
    const first = await backend('v1');
    const second = await backend('v2');
    address.pointAt(first.url);
    expect(await (await fetch(url)).text()).toBe('v1');
    address.pointAt(second.url);
    expect(await (await fetch(url, { headers: { connection: 'close' } })).text()).toBe('v2');
    await first.close();
    await second.close();
  });
});
