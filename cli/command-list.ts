// The `kubeloop` subcommands, the names some of them take (shown in help, offered by shell completion),
// and the one default namespace every command uses.
import { admissionRegistry, functionRegistry } from '../functions/registry.ts';

export const COMMANDS: Record<string, string> = {
  init: 'create a function project (code, test, fixture, Dockerfile, Loop, chart values)',
  function: 'serve one reconcile function (built-in name or module) over HTTP',
  replay: 'POST recorded requests at a function and compare the replies (--update re-records)',
  conformance: 'check a running function (any language) against the transport, error and signing cases and its fixtures',
  render: 'show the actions of a function for objects in files, and the objects after them',
  diff: 'what a new function version would change in the live cluster (dry-run; exit 1 on changes)',
  history: "an object's last reconciles from the router's flight recorder, through the API server (RBAC: who may get it)",
  console: 'a local web console of the Loops, hooks, reconcile histories and traces, reading the cluster as you',
  router: 'run the event router',
  webhook: 'run the admission webhook',
  certs: 'generate, inject, rotate or show webhook certificates',
  cluster: 'build, start, stop or inspect the local control plane',
  image: "build the Dockerfile's images without a container engine (OCI layout or archive; --load into a real node)",
  dev: 'run the whole platform on an embedded local cluster',
  completion: 'print a shell completion script (bash or zsh)',
};

/** Where kubeloop runs (the chart's documented namespace): the webhook, its certificates, kubeloop dev. */
export const DEFAULT_NAMESPACE = 'kubeloop-system';

export const CLUSTER_ACTIONS = ['build', 'up', 'down', 'status', 'kubeconfig'] as const;
export const CERTS_ACTIONS = ['generate', 'inject', 'rotate', 'show'] as const;
export const COMPLETION_SHELLS = ['bash', 'zsh'] as const;

/** Built-in functions by kind, sorted, as `kubeloop function <name>` accepts them. */
export function builtinFunctionNames(): { reconcile: string[]; admission: string[] } {
  return { reconcile: Object.keys(functionRegistry).sort(), admission: Object.keys(admissionRegistry).sort() };
}

/** The help line that lists them. */
export function builtinFunctionsHelp(): string {
  const { reconcile, admission } = builtinFunctionNames();
  return `built-in functions: ${reconcile.join(', ')}${admission.length > 0 ? `; admission: ${admission.join(', ')}` : ''}`;
}

/** The names completion offers after `kubeloop <command>`. */
export function commandWords(command: string): string[] {
  if (command === 'function') return [...builtinFunctionNames().reconcile, ...builtinFunctionNames().admission];
  if (command === 'cluster') return [...CLUSTER_ACTIONS];
  if (command === 'certs') return [...CERTS_ACTIONS];
  if (command === 'completion') return [...COMPLETION_SHELLS];
  return [];
}
