// `kubeloop function <name>`: serves one function of functions/registry.ts until SIGTERM/SIGINT.
import { closeOnSignals } from '../../lib/server/shutdown.ts';
import { FUNCTION_USAGE, readFunctionConfig } from '../../lib/runtime/config.ts';
import { serveFunction } from '../../lib/runtime/function-server.ts';
import { loadAnyFunction } from '../../functions/registry.ts';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(FUNCTION_USAGE);
    return 0;
  }
  const config = readFunctionConfig(argv);
  const definition = await loadAnyFunction(config.name);
  const served = await serveFunction(definition, {
    port: config.port,
    host: config.host,
    bodyLimitBytes: config.bodyLimitBytes,
    logLevel: config.logLevel,
    signingSecret: config.signingSecret,
  });
  served.server.app.log.info({ url: served.url, bodyLimitBytes: config.bodyLimitBytes, signed: config.signingSecret !== undefined }, `serving function ${definition.name}`);
  closeOnSignals(served.server, { drainDelayMs: config.drainDelaySeconds * 1000 });
  // Keep running: the listener holds the event loop open until a signal closes it.
  return new Promise<number>(() => {});
}
