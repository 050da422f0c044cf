// Child process of lib/kube/node-http2-writes.test.ts: one write over node:http2, then close(), with nothing
// else keeping the process alive; prints "closed" only if close() resolved (a router's stop goes on after it).
import { NodeHttp2Writes } from '../../lib/kube/node-http2-writes.ts';

const { port, ca } = JSON.parse(process.argv[2] ?? '{}') as { port: number; ca: string };
const writes = new NodeHttp2Writes(`https://127.0.0.1:${port}`, { ca });
await writes.request({ method: 'POST', path: '/api/v1/namespaces/a/configmaps', headers: {}, body: '{}', timeoutMs: 10_000 });
await writes.close();
process.stdout.write('closed\n');
