// `kubeloop console`: a local web console, as `kubectl proxy` is a local proxy: it reads the cluster with your
// kubeconfig (you see what you may see; nothing is added to the cluster), listens on 127.0.0.1 by default and
// serves the Loops and hooks, an object's reconcile history and a reconcile's trace. Exit 0 on Ctrl+C, 2 on usage.
import { parseCommandArgs } from '../command-args.ts';
import { isLoopbackAddress } from '../console/request-guard.ts';
import { openConsole } from '../console/open-console.ts';
import { parseMetricsSource } from '../console/router-metrics.ts';
import { DNS_LABEL } from '../scoped-names.ts';

const USAGE = `usage: kubeloop console [--port N] [--address ADDR] [-n NAMESPACE ...] [--router-metrics URL|NAMESPACE/SERVICE[:PORT]]
                        [--jaeger URL | --receive-traces] [--kubeconfig FILE] [--context NAME]

Serves a web console on http://127.0.0.1:PORT that reads the cluster as you (your kubeconfig): every Loop,
ClusterLoop, AdmissionHook and ClusterAdmissionHook you may list with Ready, throttling, shadow and canary
state; an object's reconcile history (the history API: shown when you may get the object); a reconcile's
trace as a waterfall. It refuses requests from other web pages (Origin) and under other host names (Host).
  --port N              port to listen on (default 8002, next to kubectl proxy's 8001; 0: any free port)
  --address ADDR        address to listen on (default 127.0.0.1). Anything but loopback lets others on the
                        network read the cluster with your credentials: only on a machine you alone use
  -n, --namespace NS    where to list Loops and AdmissionHooks when you may not list them in all namespaces
                        (repeatable; the kubeconfig context's namespace is always tried)
  --router-metrics SRC  the router's /metrics for queue depth, calls in flight and errors: a URL, or the
                        router's Service through the API server (needs get services/proxy there), e.g.
                        kubeloop-system/kubeloop-router:http-metrics
  --jaeger URL          Jaeger's query API for traces (e.g. http://127.0.0.1:16686 after kubectl port-forward)
  --receive-traces      keep recent traces in memory, received over OTLP/HTTP at <console URL>/v1/traces and
                        over OTLP/gRPC on a port of their own (printed), for kube-apiserver's spans`;

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'console',
    argv,
    {
      port: { type: 'string' },
      address: { type: 'string' },
      namespace: { type: 'string', short: 'n', multiple: true },
      'router-metrics': { type: 'string' },
      jaeger: { type: 'string' },
      'receive-traces': { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
    },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  const port = Number(values.port ?? 8002);
  const metrics = values['router-metrics'] === undefined ? undefined : parseMetricsSource(values['router-metrics']);
  const problems = [
    positionals.length > 0 && `unexpected argument "${positionals[0]}"`,
    !(Number.isInteger(port) && port >= 0 && port <= 65535) && `--port: "${values.port}" is not a port number`,
    typeof metrics === 'string' && metrics,
    (values.namespace ?? []).filter((n) => !DNS_LABEL.test(n)).map((n) => `--namespace: "${n}" is not a namespace name`)[0],
    values.jaeger !== undefined && !/^https?:\/\/[^\s]+$/.test(values.jaeger) && `--jaeger: "${values.jaeger}" is not an http(s) URL`,
    values.jaeger !== undefined && values['receive-traces'] && 'give --jaeger or --receive-traces, not both',
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) {
    console.error(`kubeloop console: ${problems.join('; ')}\n\n${USAGE}`);
    return 2;
  }
  const address = values.address ?? '127.0.0.1';
  if (!isLoopbackAddress(address)) console.error(`kubeloop console: warning: listening on ${address}: whoever reaches it reads the cluster with your credentials`);
  const running = await openConsole({
    address,
    port,
    namespaces: values.namespace ?? [],
    ...(typeof metrics === 'object' ? { routerMetrics: metrics } : {}),
    ...(values.jaeger ? { jaeger: values.jaeger } : {}),
    ...(values['receive-traces'] ? { receiveTraces: true } : {}),
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  });
  console.log(`kubeloop console on ${running.url}  (reads the cluster as your kubeconfig's user; Ctrl+C stops it)`);
  if (running.otlpEndpoint) console.log(`  traces in: OTLP/HTTP ${running.otlpEndpoint} (OTEL_EXPORTER_OTLP_ENDPOINT), OTLP/gRPC ${running.otlpGrpcEndpoint ?? '-'} (kube-apiserver's TracingConfiguration endpoint)`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  await running.close();
  return 0;
}
