// A console from its settings, as `kubeloop console` and `kubeloop dev` start it: the caller's kubeconfig
// loaded, the UI's files found, the trace source chosen (Jaeger's query API, or the console's own store fed
// over OTLP/HTTP), the server listening. close() stops the server and closes the client.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger, type LogLevel } from '../../lib/observability/logger.ts';
import { startConsole, type RunningConsole } from './console-server.ts';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from './otlp-grpc.ts';
import type { MetricsSource } from './router-metrics.ts';
import { jaegerSource, storeSource, type TraceSource } from './trace-sources.ts';
import { TraceStore } from './trace-store.ts';
import { loadConsoleAssets } from './ui-assets.ts';

export interface ConsoleSettings {
  kubeconfig?: string;
  context?: string;
  address?: string;
  port?: number;
  namespaces?: string[];
  routerMetrics?: MetricsSource;
  /** Jaeger's query API base URL. */
  jaeger?: string;
  /** Keep recent traces in memory, received at <console>/v1/traces (OTLP/HTTP) and over OTLP/gRPC on a port of their own. */
  receiveTraces?: boolean;
  /** A store the caller already feeds (its own gRPC receiver, started before the API server that exports to it). */
  traceStore?: TraceStore;
  logLevel?: LogLevel;
}

export interface OpenConsole extends RunningConsole {
  /** <url>/v1/traces's base, for OTEL_EXPORTER_OTLP_ENDPOINT, when the console receives traces. */
  otlpEndpoint?: string;
  /** host:port of its OTLP/gRPC receiver (a TracingConfiguration's endpoint), with receiveTraces. */
  otlpGrpcEndpoint?: string;
}

/** The namespace the kubeconfig's (current or named) context sets, as kubectl reads it; none when unreadable. */
async function kubeconfigNamespace(path: string | undefined, context: string | undefined): Promise<string | undefined> {
  const file = path ?? (process.env.KUBECONFIG ?? '').split(delimiter).find(Boolean) ?? join(homedir(), '.kube', 'config');
  if (!existsSync(file)) return undefined;
  const config = parse(await readFile(file, 'utf8')) as { 'current-context'?: string; contexts?: Array<{ name: string; context?: { namespace?: string } }> } | null;
  const name = context ?? config?.['current-context'];
  return config?.contexts?.find((c) => c.name === name)?.context?.namespace;
}

export async function openConsole(settings: ConsoleSettings): Promise<OpenConsole> {
  const kubeConfig = await loadKubeConfig({ ...(settings.kubeconfig ? { kubeconfig: settings.kubeconfig } : {}), ...(settings.context ? { context: settings.context } : {}) });
  const client = await KubeClient.fromKubeConfig(kubeConfig);
  // Namespaced kinds are listed in the context's namespace too, for a user who may not list them everywhere.
  const contextNamespace = await kubeconfigNamespace(settings.kubeconfig, settings.context);
  const namespaces = [...new Set([...(settings.namespaces ?? []), ...(contextNamespace ? [contextNamespace] : [])])];
  const store = settings.traceStore ?? (settings.receiveTraces ? new TraceStore() : undefined);
  const traces: TraceSource | undefined = settings.jaeger ? jaegerSource(settings.jaeger) : store ? storeSource(store) : undefined;
  let grpc: OtlpGrpcReceiver | undefined;
  try {
    if (settings.receiveTraces && store) grpc = await startOtlpGrpcReceiver(store, '127.0.0.1');
    const running = await startConsole({
      client,
      logger: createLogger({ name: 'console', level: settings.logLevel ?? 'warn' }),
      assets: await loadConsoleAssets(),
      namespaces,
      ...(settings.address ? { address: settings.address } : {}),
      ...(settings.port !== undefined ? { port: settings.port } : {}),
      ...(settings.routerMetrics ? { routerMetrics: settings.routerMetrics } : {}),
      ...(traces ? { traces } : {}),
      ...(store ? { traceStore: store } : {}),
    });
    return {
      url: running.url,
      ...(store ? { otlpEndpoint: running.url } : {}),
      ...(grpc ? { otlpGrpcEndpoint: grpc.endpoint } : {}),
      close: async () => {
        await running.close();
        await grpc?.close();
        await client.close();
      },
    };
  } catch (error) {
    await grpc?.close();
    await client.close();
    throw error;
  }
}
