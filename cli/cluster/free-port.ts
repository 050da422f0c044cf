// Free loopback TCP ports for servers started by kubeloop (control-plane components, dev processes).
// Ports come from 20000-32767, below Linux's ephemeral range (32768-60999): a port picked there can
// be taken by some outgoing connection before our server binds it; below it only listeners compete.
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';

const LOW = 20000;
const HIGH = 32767;
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on right now and that this process has not handed out before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = randomInt(LOW, HIGH + 1);
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port found in ${LOW}-${HIGH}`);
}
