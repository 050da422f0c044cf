// A TCP proxy on 127.0.0.1 that passes bytes through untouched (TLS stays end to end) to one of several
// backends, trying the next when one refuses; cut() drops every open connection mid-stream. In front of
// the API server it cuts the routers' watches; in front of the webhook replicas it is their Service.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Backend {
  host: string;
  port: number;
}

export interface TcpProxy {
  port: number;
  /** Drops every open connection at once; returns how many were open. */
  cut(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(backends: () => Backend[]): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream?: Socket }>();
  let next = 0;

  const server = createServer((client) => {
    const pair: { client: Socket; upstream?: Socket } = { client };
    pairs.add(pair);
    client.on('close', () => {
      pairs.delete(pair);
      pair.upstream?.destroy();
    });
    client.on('error', () => client.destroy());
    client.pause();
    const candidates = backends();
    const start = next++;
    const attempt = (i: number): void => {
      if (client.destroyed) return;
      const backend = candidates[(start + i) % Math.max(1, candidates.length)];
      if (!backend || i >= candidates.length) {
        client.destroy();
        return;
      }
      const upstream = connect(backend.port, backend.host);
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        pair.upstream = upstream;
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on('error', () => {
        if (!connected) attempt(i + 1);
        else client.destroy();
      });
      upstream.on('close', () => {
        if (connected) client.destroy();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      const open = pairs.size;
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      return open;
    },
    close: async () => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
