import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { closeServer } from './close-server.ts';

it('closes a server whose client is in the middle of a request, which server.close() alone waits for', async () => {
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => (arrived = resolve));
  // The handler never answers: the connection stays busy for as long as the client waits.
  const server = createServer(() => arrived());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const call = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: 'x' }).catch((error: unknown) => error);
  await inFlight;
  // Without closeAllConnections this never resolves (the test times out).
  await closeServer(server);
  expect(await call).toBeInstanceOf(Error);
});
