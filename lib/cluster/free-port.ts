// Free loopback TCP ports, handed out once per process so parallel control planes do not collide.
import { createServer } from 'node:net';

const handedOut = new Set<number>();

function probe(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A port nothing listens on right now and that this process has not handed out before. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probe();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
