// A function in another process that answers too much: /bomb ~15 MiB of empty objects with a
// Content-Length (under the 16 MiB cap), anything else 64 MiB chunked; it reports how much of a flood it sent.
import { spawn, type ChildProcess } from 'node:child_process';

const FLOOD_SERVER = `
const http = require('node:http');
const bomb = Buffer.from('{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileResponse","actions":[],"pad":[' + '{},'.repeat(5 * 1024 * 1024) + '{}]}');
const chunk = Buffer.alloc(64 * 1024, 0x20);
const server = http.createServer((req, res) => {
  req.resume();
  if (req.url === '/bomb') return res.writeHead(200, { 'content-type': 'application/json', 'content-length': bomb.length }).end(bomb);
  let sent = 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileResponse","actions":[],"pad":"');
  const pump = () => {
    while (sent < 64 * 1024 * 1024) {
      sent += chunk.length;
      if (!res.write(chunk)) return res.once('drain', pump);
    }
    res.end('"}');
  };
  res.on('close', () => process.send({ sent }));
  pump();
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

export interface FloodServer {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Resolves with the bytes the next flood sent before the reader hung up. */
  nextFloodSent(): Promise<number>;
  close(): void;
}

export async function startFloodServer(): Promise<FloodServer> {
  const child: ChildProcess = spawn(process.execPath, ['-e', FLOOD_SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const base = await new Promise<string>((resolve) => child.once('message', (m: { port: number }) => resolve(`http://127.0.0.1:${m.port}`)));
  return {
    base,
    nextFloodSent: () => new Promise<number>((resolve) => child.on('message', (m: { sent?: number }) => m.sent !== undefined && resolve(m.sent))),
    close: () => void child.kill(),
  };
}
