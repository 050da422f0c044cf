// `kubeloop dev --tracing`: Jaeger v2 on free ports (built on first use), every process started afterwards
// exporting to it at 100 % sampling, and the local kube-apiserver exporting its own spans there too.
import { join } from 'node:path';
import type { ApiserverTracing } from '../cluster/apiserver-tracing.ts';
import { startJaeger, type RunningJaeger } from '../cluster/jaeger.ts';
import { setSharedEnv } from './local-processes.ts';
import { progressReporter } from './progress.ts';

export interface DevTracing {
  jaeger: RunningJaeger;
  apiserver: ApiserverTracing;
  stop(): Promise<void>;
}

/** Starts Jaeger and points the processes `kubeloop dev` starts from now on at it. */
export async function startDevTracing(dir: string, out: Parameters<typeof progressReporter>[0]): Promise<DevTracing> {
  const progress = progressReporter(out, 'jaeger');
  let jaeger: RunningJaeger;
  try {
    jaeger = await startJaeger(join(dir, 'jaeger'), (line) => progress.update(line));
  } catch (error) {
    progress.done('Jaeger failed to start');
    throw error;
  }
  progress.done(`Jaeger UI: ${jaeger.queryUrl}`);
  setSharedEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttpEndpoint, KUBELOOP_TRACE_SAMPLING_RATIO: '1' });
  return { jaeger, apiserver: { otlpGrpcEndpoint: jaeger.otlpGrpcEndpoint }, stop: () => jaeger.stop() };
}

/** The lines `kubeloop dev` prints about tracing once everything runs. */
export function tracingLines(tracing: DevTracing, ownApiServer: boolean): string[] {
  return [
    `  Jaeger UI                ${tracing.jaeger.queryUrl}  (traces of the router, the webhook and the functions${ownApiServer ? ', and kube-apiserver' : ''})`,
    ...(ownApiServer ? [] : ['  note: --kubeconfig: the cluster\'s API server is not configured to export its spans here']),
  ];
}
