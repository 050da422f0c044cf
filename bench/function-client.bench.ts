// npm run bench:function-client: the caller's CPU per function call (lib/function-client), one call at a
// time as a live pod's reconcile makes it, against a node:http function in a child process answering as
// pod-name-label does. BENCH_BASELINE_TREE=<another checkout> runs that tree's client in the same process, rounds alternating.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { alternatingRounds, mean } from './alternating-rounds.ts';

const ROOT = join(import.meta.dirname, '..');
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

// The function: reads the request, answers with one label patch (about 300 bytes).
const SERVER = `
const http = require('node:http');
const reply = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'bench', name: 'web-7x2k' }, patch: [{ op: 'add', path: '/metadata/labels/pod-name', value: 'web-7x2k' }] }] });
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply));
}).listen(0, '127.0.0.1', function () { process.send(this.address().port); });
`;

type Client = { call(call: { url: string; body: string; timeoutMs: number }): Promise<{ kind: string }>; close(): Promise<void> };

async function clientOf(root: string): Promise<Client> {
  const module = (await import(pathToFileURL(join(root, 'lib/function-client/function-client.ts')).href)) as typeof import('../lib/function-client/function-client.ts');
  return module.createFunctionClient();
}

async function main(): Promise<void> {
  const child = fork('-e', [SERVER], { execArgv: [] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(m as number)));
  const url = `http://127.0.0.1:${port}/`;
  // A metadata-only pod's request, about 1.5 KB.
  const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'label', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-7x2k', namespace: 'bench', uid: 'u'.repeat(36), labels: { app: 'web' }, annotations: { note: 'x'.repeat(1200) } } } });
  const clients: Record<string, Client> = { 'this tree': await clientOf(ROOT) };
  if (process.env.BENCH_BASELINE_TREE) clients.baseline = await clientOf(process.env.BENCH_BASELINE_TREE);
  try {
    const figures = await alternatingRounds(clients, ROUNDS, async (client) => {
      const before = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) {
        const outcome = await client.call({ url, body, timeoutMs: 10_000 });
        if (outcome.kind !== 'reply') throw new Error(`call ${i}: ${JSON.stringify(outcome)}`);
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / CALLS;
    });
    for (const [name, perCall] of Object.entries(figures)) {
      const sorted = [...perCall].sort((a, b) => a - b);
      console.log(`${name.padEnd(10)} CPU per call: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} us, mean ${mean(perCall).toFixed(1)} us (${perCall.map((v) => v.toFixed(0)).join(', ')})`);
    }
  } finally {
    await Promise.all(Object.values(clients).map((c) => c.close()));
    child.kill();
  }
}

await main();
