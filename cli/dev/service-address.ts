// Where a Service a project names (a Loop's spec.function.ref, a hook's function.service) is on `kubeloop dev`:
// a loopback address of its own at the Service's port (the router and the gateway are started with
// --connect-services-to name.namespace=IP), forwarding each connection to the local process that runs the
// function now. Reloads re-point it; a connection while nothing listens is closed at once, so the router and
// the gateway see the function as unreachable (and dev's condition names the command and its log).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { randomInt } from 'node:crypto';

export interface ServiceTarget {
  name: string;
  namespace: string;
  port: number;
}

export interface LocalServiceAddress {
  service: ServiceTarget;
  /** The loopback IP the Service's name leads to. */
  host: string;
  /** The --connect-services-to entry: name.namespace=IP. */
  entry: string;
  /** The port it listens on: the Service's (or, asked for port 0 in tests, the one given). */
  port(): number;
  /** Forward new connections to this base URL's port on 127.0.0.1 (the current process). */
  pointAt(url: string): void;
  close(): Promise<void>;
}

/** A random 127.x.y.z other than 127.0.0.1, so two dev sessions on one machine never share an address. */
function randomLoopbackHost(): string {
  return `127.${randomInt(100, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

async function listenOn(server: Server, host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = () => resolve(false);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(true);
    });
  });
}

/** Listens at the Service's port on a fresh loopback IP (a few tries should one be taken). */
export async function startServiceAddress(service: ServiceTarget): Promise<LocalServiceAddress> {
  let targetPort: number | undefined;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (targetPort === undefined) return void socket.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.once('error', end).once('close', end);
    upstream.once('error', end).once('close', end);
    socket.pipe(upstream).pipe(socket);
  });
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const host = randomLoopbackHost();
    if (!(await listenOn(server, host, service.port))) continue;
    return {
      service,
      host,
      entry: `${service.name}.${service.namespace}=${host}`,
      port: () => (server.address() as { port: number }).port,
      pointAt(url: string) {
        targetPort = Number(new URL(url).port);
      },
      async close() {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  throw new Error(`no free loopback address for Service ${service.namespace}/${service.name} port ${service.port}`);
}
