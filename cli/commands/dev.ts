// `kubeloop dev` (= `npm start`): the whole platform locally, on an embedded control plane or, with
// --kubeconfig, on an existing cluster; Ctrl+C stops everything it started (see cli/dev/run-dev.ts).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pickSetting, settingNumber } from '../../lib/config/settings.ts';
import { runDev, type DevOptions } from '../dev/run-dev.ts';
import type { ProjectSpec } from '../dev/project-function.ts';
import { usageFailure } from '../command-args.ts';
import { DEFAULT_NAMESPACE } from '../command-list.ts';
import { resolveModuleFile } from '../function-module.ts';

const USAGE = `usage: kubeloop dev [--kubeconfig FILE] [--no-webhook] [--no-samples] [--namespace kubeloop-system]
                    [--dir ~/.kubeloop/dev] [--status-interval-seconds 2] [--no-seeds] [--tracing]
                    [(--function MODULE | --function-command CMD) [--loop LOOP.yaml] [--hook HOOK.yaml] [--shadow MODULE]]...
                    [--loop-namespace default | --tenant NS]

Starts a local control plane (building its binaries on first use), installs the CRDs and what a default
\`helm install\` of the chart adds besides its workloads (rendered from the chart: tenant roles, the router's
and gateway's RBAC, the Loop and hook admission policies, the history reader binding), starts the four
functions, their Loops (URLs on 127.0.0.1), the router and the webhook (dev mode) as local processes acting as
the chart's ServiceAccounts, registers the router's history API (kubeloop history; on its own control plane),
applies samples/, prints what it started and commands to try, then a live status until Ctrl+C.

  --kubeconfig FILE               use this cluster instead of starting one (like the seeds' "make run")
  --no-webhook                    do not run the webhook (its dev registration needs a local API server)
  --no-samples                    do not apply samples/*.yaml
  --namespace NS                  kubeloop's namespace: the webhook's certificate Secret, the history API's Service (default kubeloop-system)
  --dir DIR                       logs of the local processes in DIR/logs (default ~/.kubeloop/dev)
  --status-interval-seconds N     live status refresh (default 2)
  --function MODULE               also run your function (default export defineFunction(...) or defineAdmission(...);
                                  .ts or .js) and reload it when a file in its folder changes: a new process
                                  starts, the Loop or Service address is re-pointed, the old one finishes its calls
  --function-command CMD          ... or run it with this command in the folder of its --loop or --hook file, e.g.
                                  "python3 function.py" or "go run ." (told PORT and HOST), reloaded the same way;
                                  repeat --function/--function-command for several projects, each followed by its files
  --loop FILE                     the function's Loop or ClusterLoop (and its ServiceAccount and RBAC), e.g.
                                  init's loop.yaml, applied as written: a spec.function.ref naming the function's
                                  Service reaches the local process (the router is told where); a url is re-pointed
  --hook FILE                     the function's AdmissionHook (init --admission's admission-hook.yaml), the same way
  --loop-namespace NS             where namespaced objects without a namespace go (created if missing; default "default")
  --tenant NS                     be that namespace's admin: dev creates NS and a kubeconfig for a user bound only
                                  to admin there, prints it, and applies --loop and --hook as that user
  --shadow MODULE                 also run a new version as the Loop's shadow: it gets every call, its answers are
                                  compared and never applied (ShadowDiverged on the Loop; docs/safe-changes.md)
  --no-seeds                      no seed functions, Loops or samples: only the platform (and your function)
  --tracing                       run Jaeger (built from the Go module proxy on first use, cached) and send it
                                  every span: the router's, the webhook's, the functions' and kube-apiserver's
                                  (its --tracing-config-file); prints the Jaeger UI address`;

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/**
 * The projects in flag order: each --function or --function-command starts one, and the --loop, --hook and
 * --shadow after it are its own (`--function a.ts --loop a.yaml --function-command "go run ." --hook b.yaml`).
 * A command runs in its Loop's or hook's folder (init writes them in the project's root).
 */
function projectsOf(tokens: Token[], namespace: string): ProjectSpec[] {
  const groups: Array<{ flag: string; source: string; loop?: string; hook?: string; shadow?: string }> = [];
  for (const token of tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    const value = token.value;
    if (token.name === 'function' || token.name === 'function-command') groups.push({ flag: `--${token.name}`, source: value });
    else if (token.name === 'loop' || token.name === 'hook' || token.name === 'shadow') {
      const group = groups.at(-1);
      if (!group) throw new Error(`--${token.name} ${value}: give the function first (--function MODULE or --function-command CMD), then what calls it\n${USAGE}`);
      if (group[token.name] !== undefined) throw new Error(`--${token.name}: one per function (${group.source}); start another with --function or --function-command\n${USAGE}`);
      if (token.name !== 'shadow' && !existsSync(value)) throw new Error(`--${token.name}: ${value}: no such file`);
      group[token.name] = value;
    }
  }
  return groups.map((group) => {
    if (!group.loop && !group.hook) throw new Error(`${group.flag} ${group.source} goes with --loop and/or --hook: the function and what calls it\n${USAGE}`);
    if (group.shadow && !group.loop) throw new Error(`--shadow needs --function and --loop: it shadows your Loop's function\n${USAGE}`);
    const folder = dirname(resolve(group.loop ?? group.hook ?? '.'));
    return {
      source: group.flag === '--function' ? { module: resolveModuleFile(group.source) } : { command: group.source, cwd: folder },
      namespace,
      ...(group.loop ? { loop: resolve(group.loop) } : {}),
      ...(group.hook ? { hook: resolve(group.hook) } : {}),
      ...(group.shadow ? { shadow: resolveModuleFile(group.shadow) } : {}),
    };
  });
}

export function readDevOptions(argv: string[], out: DevOptions['out']): DevOptions {
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: {
      kubeconfig: { type: 'string' },
      'no-webhook': { type: 'boolean' },
      'no-samples': { type: 'boolean' },
      namespace: { type: 'string' },
      dir: { type: 'string' },
      'status-interval-seconds': { type: 'string' },
      function: { type: 'string', multiple: true },
      'function-command': { type: 'string', multiple: true },
      loop: { type: 'string', multiple: true },
      hook: { type: 'string', multiple: true },
      tenant: { type: 'string' },
      shadow: { type: 'string', multiple: true },
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
  if (values.tenant !== undefined && values['loop-namespace'] !== undefined) throw new Error(`--tenant is the namespace the files go into: give it or --loop-namespace, not both\n${USAGE}`);
  const loopNamespace = values.tenant ?? values['loop-namespace'] ?? 'default';
  for (const [flag, value] of [['--namespace', namespace], [values.tenant === undefined ? '--loop-namespace' : '--tenant', loopNamespace]] as const) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value)) throw new Error(`${flag}: "${value}" is not a valid namespace name`);
  }
  if (values.tenant !== undefined && values.kubeconfig) throw new Error(`--tenant needs dev's own control plane (its CA signs the user's certificate); drop --kubeconfig\n${USAGE}`);
  if (values['loop-namespace'] !== undefined && !values.loop && !values.hook) throw new Error(`--loop-namespace is where --loop's Loop and --hook's hook go: give --function and --loop or --hook too\n${USAGE}`);
  const projects = projectsOf(tokens, loopNamespace);
  return {
    ...(projects.length > 0 ? { projects } : {}),
    ...(values.tenant !== undefined ? { tenant: values.tenant } : {}),
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
