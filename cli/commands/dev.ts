// `kubeloop dev` (= `npm start`): the whole platform locally, on an embedded control plane or, with
// --kubeconfig, on an existing cluster; Ctrl+C stops everything it started (see cli/dev/run-dev.ts).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pickSetting, settingNumber } from '../../lib/config/settings.ts';
import { runDev, type DevOptions } from '../dev/run-dev.ts';
import { usageFailure } from '../command-args.ts';
import { DEFAULT_NAMESPACE } from '../command-list.ts';
import { resolveModuleFile } from '../function-module.ts';

const USAGE = `usage: kubeloop dev [--kubeconfig FILE] [--no-webhook] [--no-samples] [--namespace kubeloop-system]
                    [--dir ~/.kubeloop/dev] [--status-interval-seconds 2]
                    [--function MODULE --loop LOOP.yaml [--loop-namespace default] [--shadow MODULE] [--no-seeds]] [--tracing]

Starts a local control plane (building its binaries on first use), installs the CRDs, starts the four
functions, their Loops (URLs on 127.0.0.1), the router and the webhook (dev mode) as local processes,
registers the router's history API (kubeloop history; on its own control plane), applies samples/, prints
what it started and commands to try, then a live status until Ctrl+C.

  --kubeconfig FILE               use this cluster instead of starting one (like the seeds' "make run")
  --no-webhook                    do not run the webhook (its dev registration needs a local API server)
  --no-samples                    do not apply samples/*.yaml
  --namespace NS                  kubeloop's namespace: the webhook's certificate Secret, the history API's Service (default kubeloop-system)
  --dir DIR                       logs of the local processes in DIR/logs (default ~/.kubeloop/dev)
  --status-interval-seconds N     live status refresh (default 2)
  --function MODULE               also run your function (default export defineFunction(...); .ts or .js)
                                  and reload it when a file in its folder changes: a new process starts,
                                  the Loop is re-pointed, the old one finishes its calls and stops
  --loop FILE                     the function's Loop or ClusterLoop (and its ServiceAccount and RBAC), e.g.
                                  from kubeloop init; its function is pointed at the local process
  --loop-namespace NS             where a namespaced Loop and the file's objects without a namespace go
                                  (created if missing; default "default"); the Loop sees only that namespace
  --shadow MODULE                 also run a new version as the Loop's shadow: it gets every call, its answers are
                                  compared and never applied (ShadowDiverged on the Loop; docs/safe-changes.md)
  --no-seeds                      run only your function: no seed functions, Loops or samples
  --tracing                       run Jaeger (built from the Go module proxy on first use, cached) and send it
                                  every span: the router's, the webhook's, the functions' and kube-apiserver's
                                  (its --tracing-config-file); prints the Jaeger UI address`;

export function readDevOptions(argv: string[], out: DevOptions['out']): DevOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      kubeconfig: { type: 'string' },
      'no-webhook': { type: 'boolean' },
      'no-samples': { type: 'boolean' },
      namespace: { type: 'string' },
      dir: { type: 'string' },
      'status-interval-seconds': { type: 'string' },
      function: { type: 'string' },
      loop: { type: 'string' },
      shadow: { type: 'string' },
      'loop-namespace': { type: 'string' },
      'no-seeds': { type: 'boolean' },
      tracing: { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(' ')}\n${USAGE}`);
  // No environment fallbacks on purpose: a KUBECONFIG set in the shell must not turn `npm start` into a run
  // against that cluster; --kubeconfig says so explicitly.
  const interval = settingNumber(pickSetting(values, {}, 'status-interval-seconds'), 2, 0.2, 3600);
  const namespace = values.namespace ?? DEFAULT_NAMESPACE;
  const loopNamespace = values['loop-namespace'] ?? 'default';
  for (const [flag, value] of [['--namespace', namespace], ['--loop-namespace', loopNamespace]] as const) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value)) throw new Error(`${flag}: "${value}" is not a valid namespace name`);
  }
  if (values['loop-namespace'] !== undefined && !values.loop) throw new Error(`--loop-namespace is where --loop's Loop goes: give --function and --loop too\n${USAGE}`);
  if (!values.function !== !values.loop) throw new Error(`--function and --loop go together\n${USAGE}`);
  if (values['no-seeds'] && !values.function) throw new Error(`--no-seeds needs --function and --loop: there would be nothing to run\n${USAGE}`);
  if (values.loop && !existsSync(values.loop)) throw new Error(`--loop: ${values.loop}: no such file`);
  if (values.shadow && !values.function) throw new Error(`--shadow needs --function and --loop: it shadows your function\n${USAGE}`);
  return {
    ...(values.function && values.loop
      ? { userFunction: { module: resolveModuleFile(values.function), loop: resolve(values.loop), loopNamespace, ...(values.shadow ? { shadow: resolveModuleFile(values.shadow) } : {}) } }
      : {}),
    seeds: !values['no-seeds'],
    tracing: values.tracing ?? false,
    ...(values.kubeconfig ? { kubeconfig: resolve(values.kubeconfig) } : {}),
    dir: resolve(values.dir ?? join(homedir(), '.kubeloop', 'dev')),
    namespace,
    webhook: !values['no-webhook'],
    samples: !values['no-samples'],
    statusIntervalMs: interval * 1000,
    out,
  };
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  let options: DevOptions;
  try {
    options = readDevOptions(argv, process.stdout);
  } catch (error) {
    return usageFailure('dev', error);
  }
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals): void => {
    signals += 1;
    // A second Ctrl+C while stopping: give up waiting; the supervisor's exit hook kills what is left.
    if (signals > 1) process.exit(130);
    process.stdout.write(`\n${name}: stopping (Ctrl+C again to force)\n`);
    controller.abort();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  let code: number;
  try {
    code = await runDev(options, controller.signal);
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
  }
  // Everything it started is stopped; a stray handle (an idle keep-alive socket, a watch being torn down)
  // must not keep Ctrl+C waiting. Exit once what was written to stdout has been flushed.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
