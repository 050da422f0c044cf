// The console as `kubeloop dev` runs it: on a free loopback port, reading the dev cluster with dev's
// kubeconfig, the router's metrics from its local process, and traces from Jaeger (--tracing) or else from
// its own store, which every process dev starts afterwards exports to (OTLP/HTTP, all sampled).
import { setSharedEnv } from '../dev/local-processes.ts';
import { openConsole, type OpenConsole } from './open-console.ts';

/** The console, or undefined (said why) when it cannot start: dev runs on without it. */
export async function startDevConsole(kubeconfig: string, jaegerUrl: string | undefined, routerUrl: () => string | undefined, say: (line: string) => void): Promise<OpenConsole | undefined> {
  let running: OpenConsole;
  try {
    running = await openConsole({
      kubeconfig,
      port: 0,
      routerMetrics: { url: () => routerUrl()?.replace(/\/?$/, '/metrics') },
      ...(jaegerUrl ? { jaeger: jaegerUrl } : { receiveTraces: true }),
    });
  } catch (error) {
    say(`note: the console did not start: ${(error as Error).message}`);
    return undefined;
  }
  if (running.otlpEndpoint) setSharedEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: running.otlpEndpoint, KUBELOOP_TRACE_SAMPLING_RATIO: '1' });
  return running;
}

/** dev's line about it. */
export const devConsoleLine = (running: OpenConsole) => `  console                  ${running.url}  (kubeloop console: the Loops, each object's reconcile history, its traces)`;
