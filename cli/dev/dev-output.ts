// What `kubeloop dev` prints once running: every process with its URL and log, the Loops and hooks, the
// kubeconfigs and the commands to try; then the Loops' live status until Ctrl+C.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../../lib/kube/index.ts';
import { loopRows, readLoopReadiness, readRouterMetrics, statusPrinter } from './live-status.ts';
import type { LocalProcess } from './local-processes.ts';
import type { MetricSample } from './prometheus-text.ts';
import type { ProjectFunction } from './project-function.ts';
import type { Manifest } from './apply-manifests.ts';
import { describeSource } from './user-function.ts';
import { tryCommands } from './try-commands.ts';
import { tracingLines } from './dev-tracing.ts';
import { devConsoleLine } from '../console/dev-console.ts';
import { sayTo, type DevOptions } from './dev-options.ts';
import type { DevSession } from './dev-session.ts';

export function printRunning(options: DevOptions, session: DevSession, samples: Array<{ manifest: Manifest }>, kubeconfigPath: string): void {
  const say = sayTo(options.out);
  const { started, projects } = session;
  const userProcesses = projects.flatMap((p) => p.fn.current() ?? []);
  say('');
  say('kubeloop dev is running');
  for (const p of [...started, ...userProcesses]) say(`  ${p.name.padEnd(24)} ${p.url}  pid ${p.process.pid ?? '?'}  log ${p.process.logPath}`);
  for (const project of projects) {
    const what = describeSource(project.spec.source);
    if (!project.fn.current()) say(`  ${what} is not running (${project.fn.problem() ?? ''}); log ${project.fn.logPath()}`);
    say(`  ${what}: reloaded when a file in its folder changes (the cluster and the router keep running)`);
    for (const line of project.addresses) say(`  ${line} (the router and the webhook call it there)`);
  }
  const hooks = projects.flatMap((p) => p.hooks);
  if (hooks.length > 0) say(`  your AdmissionHooks: ${hooks.join(', ')}`);
  say(`  Loops (function URLs on 127.0.0.1): ${session.appliedLoops.join(', ') || '(none)'}`);
  if (session.console) say(devConsoleLine(session.console));
  if (session.tracing) for (const line of tracingLines(session.tracing, !options.kubeconfig)) say(line);
  if (session.historyApi) say(`  history API (kubeloop history)  https://127.0.0.1:${session.historyApi}, registered as APIService v1alpha1.history.kubeloop.dev`);
  if (session.appliedHooks.length > 0) say(`  AdmissionHooks (function URLs on 127.0.0.1): ${session.appliedHooks.join(', ')}`);
  if (samples.length > 0) say(`  samples applied: ${samples.map(({ manifest }) => `${manifest.kind}/${manifest.metadata.name}`).join(', ')}`);
  if (options.webhook && options.kubeconfig) say('  note: the webhook is registered at https://127.0.0.1; only an API server on this machine can call it');
  say('');
  say(`kubeconfig: ${kubeconfigPath}`);
  // kubectl supports one minor version either side of the server; the machine's may be years older.
  if (session.plane) say(`kubectl: ${session.plane.binaries.kubectl}  (built with this API server; a kubectl more than one minor version apart is unsupported)`);
  if (session.tenant) say(`tenant kubeconfig: ${session.tenant.kubeconfig}  (${session.tenant.user}: only admin in namespace ${session.tenant.namespace}; export KUBECONFIG=it to act as the namespace admin)`);
  say('');
  say('Try:');
  for (const line of tryCommands(kubeconfigPath, samples.map(({ manifest }) => manifest), new Date(), session.historyApi !== undefined && session.appliedLoops.includes('podset'))) say(line);
  say('');
}

/** Prints the Loops' status until the signal aborts (0) or a local process dies (1). */
export async function showStatusUntilAborted(options: DevOptions, started: LocalProcess[], client: KubeClient, signal: AbortSignal, projects: ProjectFunction[]): Promise<number> {
  const say = sayTo(options.out);
  const router = started.find((p) => p.name === 'router');
  const printer = statusPrinter(options.out);
  let before: MetricSample[] = [];
  let statusError = '';
  while (!signal.aborted) {
    const dead = started.find((p) => !p.process.running);
    if (dead) {
      say(`${dead.name} exited unexpectedly; its log ${dead.process.logPath} ends with:\n${dead.process.logTail(20)}`);
      return 1;
    }
    try {
      for (const project of projects) await project.reportHealth(client);
      const now = router ? await readRouterMetrics(`${router.url}/metrics`) : [];
      printer.print(loopRows(await readLoopReadiness(client), now, before), new Date());
      before = now;
      statusError = '';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== statusError) say(`status unavailable: ${message}`);
      statusError = message;
    }
    await sleep(options.statusIntervalMs, undefined, { signal }).catch(() => {});
  }
  return 0;
}
