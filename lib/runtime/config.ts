// Configuration of `kubeloop function <name>`: flags win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pickSetting, type FlagValues } from '../config/settings.ts';
import { readServerSettings, SERVER_DEFAULTS, SERVER_FLAG_OPTIONS, TRACING_USAGE, type ServerSettings } from '../server/server-settings.ts';
import { parseSigningSecrets } from '../signing/webhook-signature.ts';

export interface FunctionConfig extends ServerSettings {
  name: string;
  /** The Standard Webhooks secret (`whsec_…`) requests must be signed with; replies are signed with it. */
  signingSecret?: string;
}

/** The port a function serves on unless told otherwise (the chart's and `kubeloop init`'s containerPort). */
export const DEFAULT_FUNCTION_PORT = 8080;

export const FUNCTION_USAGE = `usage: kubeloop function <name|module> [--port ${DEFAULT_FUNCTION_PORT}] [--host ${SERVER_DEFAULTS.host}] [--body-limit-bytes N] [--log-level ${SERVER_DEFAULTS.logLevel}] [--drain-delay-seconds ${SERVER_DEFAULTS.drainDelaySeconds}]
                         [--signing-secret-file PATH]

<name> is a built-in function (at, pod-name-label, podset, watcher); <module> is a .ts or .js file (or a folder
with src/index.ts) whose default export is defineFunction({ name, reconcile }).

environment: PORT, HOST, KUBELOOP_BODY_LIMIT_BYTES, KUBELOOP_LOG_LEVEL, KUBELOOP_DRAIN_DELAY_SECONDS,
KUBELOOP_SIGNING_SECRET_FILE, KUBELOOP_SIGNING_SECRET (the secret itself) (flags win)

${TRACING_USAGE}`;

/** The signing secret from a file (a mounted Secret key) or the environment, checked; undefined when none is set. */
export function readSigningSecret(values: FlagValues, env: NodeJS.ProcessEnv): string | undefined {
  const file = pickSetting(values, env, 'signing-secret-file', 'KUBELOOP_SIGNING_SECRET_FILE');
  let picked = pickSetting({}, env, 'signing-secret', 'KUBELOOP_SIGNING_SECRET');
  if (file) {
    try {
      picked = { value: readFileSync(file.value, 'utf8').trim(), setting: `${file.setting} (${file.value})` };
    } catch (error) {
      throw new Error(`${file.setting}: cannot read "${file.value}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }
  if (!picked) return undefined;
  parseSigningSecrets(picked.value, picked.setting);
  return picked.value.trim();
}

export function readFunctionConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): FunctionConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...SERVER_FLAG_OPTIONS, 'signing-secret-file': { type: 'string' } },
  });
  const [name, ...extra] = positionals;
  if (!name) throw new Error(`missing the function name or module\n${FUNCTION_USAGE}`);
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(' ')}\n${FUNCTION_USAGE}`);
  const signingSecret = readSigningSecret(values, env);
  return {
    name,
    // At least 1 KiB: anything smaller cannot hold a ReconcileRequest.
    ...readServerSettings(values, env, { defaultPort: DEFAULT_FUNCTION_PORT, minBodyLimitBytes: 1024, maxDrainDelaySeconds: 300 }),
    ...(signingSecret === undefined ? {} : { signingSecret }),
  };
}
