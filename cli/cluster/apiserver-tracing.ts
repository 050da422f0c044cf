// kube-apiserver's own tracing (APIServerTracing, GA in 1.34): a TracingConfiguration file exporting OTLP/gRPC
// to a local collector (Jaeger in `kubeloop dev --tracing`). With it the API server's spans join kubeloop's:
// its webhook calls carry W3C traceparent, so an admission's gateway span has the API server's as parent.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ApiserverTracing {
  /** OTLP/gRPC host:port (no scheme), e.g. 127.0.0.1:4317. */
  otlpGrpcEndpoint: string;
  /** Sampled requests per million; every request by default (development). */
  samplingRatePerMillion?: number;
}

export function tracingConfiguration(tracing: ApiserverTracing): string {
  return [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: TracingConfiguration',
    `endpoint: ${tracing.otlpGrpcEndpoint}`,
    `samplingRatePerMillion: ${tracing.samplingRatePerMillion ?? 1_000_000}`,
    '',
  ].join('\n');
}

/** Writes the configuration into the plane's directory and returns the flag that points kube-apiserver at it. */
export async function apiserverTracingArgs(dir: string, tracing: ApiserverTracing): Promise<string[]> {
  const path = join(dir, 'apiserver-tracing.yaml');
  await writeFile(path, tracingConfiguration(tracing));
  return [`--tracing-config-file=${path}`];
}
