// Configuration of `kubeloop function <name>`: flags win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { readServerSettings, SERVER_FLAG_OPTIONS, type ServerSettings } from '../server/server-settings.ts';

export interface FunctionConfig extends ServerSettings {
  name: string;
}

export const FUNCTION_USAGE = `usage: kubeloop function <name|module> [--port 8080] [--host 0.0.0.0] [--body-limit-bytes N] [--log-level info] [--drain-delay-seconds 0]

<name> is a built-in function (at, pod-name-label, podset, watcher); <module> is a .ts or .js file (or a folder
with src/index.ts) whose default export is defineFunction({ name, reconcile }).

environment: PORT, HOST, KUBELOOP_BODY_LIMIT_BYTES, KUBELOOP_LOG_LEVEL, KUBELOOP_DRAIN_DELAY_SECONDS (flags win)`;

export function readFunctionConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): FunctionConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: SERVER_FLAG_OPTIONS,
  });
  const [name, ...extra] = positionals;
  if (!name) throw new Error(`missing the function name or module\n${FUNCTION_USAGE}`);
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(' ')}\n${FUNCTION_USAGE}`);
  return {
    name,
    // At least 1 KiB: anything smaller cannot hold a ReconcileRequest.
    ...readServerSettings(values, env, { defaultPort: 8080, minBodyLimitBytes: 1024, maxDrainDelaySeconds: 300 }),
  };
}
