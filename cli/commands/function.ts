// `kubeloop function <name|module>`: serves a built-in function (functions/registry.ts) or any module whose
// default export is a defineFunction(...) result, until SIGTERM/SIGINT, on node:http (no framework loaded: less
// memory per function pod; docs/performance.md "Function memory").
import { startTracing } from '../../lib/observability/tracing.ts';
import { closeOnSignals } from '../../lib/server/shutdown.ts';
import { FUNCTION_USAGE, readFunctionConfig, type FunctionConfig } from '../../lib/runtime/config.ts';
import { serveNodeFunction } from '../../lib/runtime/node-function-server.ts';
import { usageFailure } from '../command-args.ts';
import { builtinFunctionsHelp } from '../command-list.ts';
import { FunctionModuleError, loadFunctionByNameOrPath } from '../function-module.ts';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`${FUNCTION_USAGE}\n\n${builtinFunctionsHelp()}`);
    return 0;
  }
  let config: FunctionConfig;
  try {
    config = readFunctionConfig(argv);
  } catch (error) {
    return usageFailure('function', error);
  }
  let definition;
  try {
    definition = await loadFunctionByNameOrPath(config.name);
  } catch (error) {
    if (!(error instanceof FunctionModuleError)) throw error;
    return usageFailure('function', error, `${FUNCTION_USAGE}\n\n${builtinFunctionsHelp()}`);
  }
  const tracing = await startTracing(config.tracing, `kubeloop-function-${definition.name}`);
  const served = await serveNodeFunction(definition, {
    port: config.port,
    host: config.host,
    bodyLimitBytes: config.bodyLimitBytes,
    logLevel: config.logLevel,
    signingSecret: config.signingSecret,
  });
  served.server.log.info({ url: served.url, bodyLimitBytes: config.bodyLimitBytes, signed: config.signingSecret !== undefined }, `serving function ${definition.name}`);
  closeOnSignals(served.server, {
    drainDelayMs: config.drainDelaySeconds * 1000,
    exit: (code) => {
      void tracing.shutdown().finally(() => process.exit(code));
    },
  });
  // Keep running: the listener holds the event loop open until a signal closes it.
  return new Promise<number>(() => {});
}
