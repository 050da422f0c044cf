// Child process of bench/webhook.bench.ts for the AdmissionHook path: "function" serves the require-label
// admission function over HTTP; "gateway" serves the gateway over HTTPS with one hook forwarding to it;
// "direct" serves the same decision in-process on an HTTPS webhook route (the baseline of the hop).
// Prints {"url": ...} on stdout and runs until killed.
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { createLogger } from '../lib/observability/logger.ts';
import { serveFunction } from '../lib/runtime/index.ts';
import { listen } from '../lib/server/index.ts';
import requireLabel from '../functions/require-label/index.ts';
import { FunctionCaller, DEV_HOOK_POLICY, resolveHook, createWebhookServer, NO_CONTEXT } from '../webhooks/index.ts';
import { directAdmissionRoute } from './direct-admission-route.ts';

const [mode, certFile, keyFile, functionUrl] = process.argv.slice(2);
const logger = createLogger({ name: 'bench', level: 'warn', destination: pino.destination({ dest: '/dev/null', sync: true }) });
// An orderly exit on SIGTERM, so a CPU profile (BENCH_CPU_PROF) is written.
process.once('SIGTERM', () => process.exit(0));

if (mode === 'function') {
  const served = await serveFunction(requireLabel, { port: 0, host: '127.0.0.1', logger });
  console.log(JSON.stringify({ url: served.url }));
} else if ((mode === 'gateway' || mode === 'direct') && certFile && keyFile) {
  const serving = { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  const resolved = resolveHook({
    metadata: { name: 'require-label' },
    spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], function: { url: `${functionUrl ?? 'http://127.0.0.1:1'}/admit` }, serviceAccount: { namespace: 'bench', name: 'require-label' } },
  }, DEV_HOOK_POLICY);
  if (!resolved.ok) throw new Error(resolved.message);
  const hooks = new Map([[resolved.hook.name, resolved.hook]]);
  const server = createWebhookServer({
    logger,
    serving,
    ...(mode === 'gateway' ? { gateway: { hooks: () => hooks, contexts: NO_CONTEXT, caller: new FunctionCaller(), reportCall: () => {} } } : {}),
  });
  if (mode === 'direct') {
    // The same work minus the hop: convert, decide in-process, convert back.
    directAdmissionRoute(server.app, '/admit/require-label', resolved.hook, requireLabel.admit);
  }
  const url = await listen(server.app, { port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url }));
} else {
  console.error('usage: admission-bench-server.ts function | gateway|direct <tls.crt> <tls.key> [function url]');
  process.exit(2);
}
