// Jaeger v2 (an OpenTelemetry Collector distribution with Jaeger's storage and query UI) for `kubeloop dev
// --tracing` and the tracing e2e tests: built from the Go module proxy on first use into the version-keyed
// cache like the control plane (never committed), then run on free ports with in-memory storage.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withBuildLock } from './binaries.ts';
import { freePort } from './free-port.ts';
import { goBuild, goVersion, runGo, type ProgressFn } from './go-build.ts';
import { executable, writeWrapperModule } from './go-wrapper.ts';
import { spawnSupervised, type SupervisedProcess } from './supervisor.ts';
import { cacheRoot } from './versions.ts';

/**
 * Jaeger 2.13 as its Go module publishes it: the module path has no /v2 suffix, so each v2 release is also
 * tagged v1.(x+63); v1.76.0 is v2.13.0. The module carries no built UI assets (they come from jaeger-ui's npm
 * build); the binary serves a placeholder page at / and the full query API under /api/.
 */
export const JAEGER_VERSION = 'v1.76.0';
const MODULE = 'github.com/jaegertracing/jaeger';
const PACKAGE = `${MODULE}/cmd/jaeger`;

export function jaegerPath(): string {
  return join(cacheRoot(), 'jaeger', JAEGER_VERSION, 'jaeger');
}

/** Path of the jaeger binary, building it first when it is not cached (a cold build takes many minutes). */
export async function ensureJaeger(onProgress: ProgressFn = () => {}): Promise<string> {
  const binary = jaegerPath();
  if (await executable(binary)) return binary;
  if (!(await goVersion())) throw new Error(`building Jaeger needs Go >= 1.24 on PATH (it is not cached at ${binary})`);
  return withBuildLock(onProgress, async () => {
    if (await executable(binary)) return binary;
    const src = join(cacheRoot(), 'src', `jaeger-${JAEGER_VERSION}`);
    await mkdir(src, { recursive: true });
    await mkdir(join(binary, '..'), { recursive: true });
    onProgress(`building Jaeger ${JAEGER_VERSION} (v2) from the Go module proxy into ${binary} (cold: 10-30 min on 2 cores, cached afterwards)`);
    await writeWrapperModule(src, 'jaeger', MODULE, JAEGER_VERSION, PACKAGE, onProgress);
    await runGo({ args: ['mod', 'tidy'], cwd: src, label: 'go mod tidy (jaeger)', onProgress });
    await goBuild(src, PACKAGE, binary, '-s -w', `Jaeger ${JAEGER_VERSION}`, onProgress);
    return binary;
  });
}

export interface JaegerPorts {
  /** OTLP/gRPC: what kube-apiserver's TracingConfiguration exports to (host:port, no scheme). */
  otlpGrpc: number;
  /** OTLP/HTTP: what kubeloop's deployables export to (http://127.0.0.1:<port>). */
  otlpHttp: number;
  /** The query API and UI. */
  query: number;
  queryGrpc: number;
  health: number;
}

/** Jaeger's all-in-one configuration cut to what is needed: OTLP in, memory storage, the query service. */
export function jaegerConfig(ports: JaegerPorts): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    resource:
      service.name: jaeger
    metrics:
      level: none
    # The collector's own traces: none.
    traces:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${ports.health}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.otlpGrpc}
      http:
        endpoint: 127.0.0.1:${ports.otlpHttp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

export interface RunningJaeger {
  ports: JaegerPorts;
  /** http://127.0.0.1:<query>: the UI, and the query API under /api. */
  queryUrl: string;
  /** http://127.0.0.1:<otlpHttp>, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  otlpHttpEndpoint: string;
  /** 127.0.0.1:<otlpGrpc>, for kube-apiserver's TracingConfiguration. */
  otlpGrpcEndpoint: string;
  process: SupervisedProcess;
  stop(): Promise<void>;
}

/** Starts Jaeger (building it first when needed) and waits until its query API answers. */
export async function startJaeger(dir: string, onProgress: ProgressFn = () => {}): Promise<RunningJaeger> {
  const binary = await ensureJaeger(onProgress);
  const ports: JaegerPorts = { otlpGrpc: await freePort(), otlpHttp: await freePort(), query: await freePort(), queryGrpc: await freePort(), health: await freePort() };
  await mkdir(dir, { recursive: true });
  const configPath = join(dir, 'jaeger.yaml');
  await writeFile(configPath, jaegerConfig(ports));
  const process = spawnSupervised({ name: 'jaeger', command: binary, args: [`--config=${configPath}`], logDir: dir });
  const queryUrl = `http://127.0.0.1:${ports.query}`;
  await process.waitUntil('answering', async () => (await fetch(`${queryUrl}/api/services`).catch(() => undefined))?.ok === true, 60_000);
  onProgress(`Jaeger ${JAEGER_VERSION} UI and query API on ${queryUrl}, OTLP on 127.0.0.1:${ports.otlpHttp} (HTTP) and 127.0.0.1:${ports.otlpGrpc} (gRPC)`);
  return {
    ports,
    queryUrl,
    otlpHttpEndpoint: `http://127.0.0.1:${ports.otlpHttp}`,
    otlpGrpcEndpoint: `127.0.0.1:${ports.otlpGrpc}`,
    process,
    stop: () => process.stop(),
  };
}
