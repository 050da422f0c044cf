// Where the console reads the router's /metrics: a URL it can reach itself (kubeloop dev's local router), or
// the router's Service through the API server's service proxy with the caller's credentials (a real cluster:
// shown only to who may get services/proxy there). Either way a failure is a reason, never an error page.
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { parsePrometheusText, type MetricSample } from '../dev/prometheus-text.ts';
import { readRouterMetrics } from '../dev/live-status.ts';

/** A URL (or, in kubeloop dev, where the router's URL will be once it runs), or the router's Service. */
export type MetricsSource = { url: string | (() => string | undefined) } | { service: { namespace: string; name: string; port: string } };

/** `--router-metrics`: an http(s) URL, or NAMESPACE/SERVICE[:PORT] (port name or number; http-metrics as the chart names it). */
export function parseMetricsSource(value: string): MetricsSource | string {
  if (/^https?:\/\//.test(value)) return { url: value.endsWith('/metrics') ? value : `${value.replace(/\/+$/, '')}/metrics` };
  const match = /^([a-z0-9-]+)\/([a-z0-9-]+)(?::([a-z0-9-]+))?$/.exec(value);
  if (!match) return `--router-metrics: "${value}" is neither a URL nor NAMESPACE/SERVICE[:PORT]`;
  return { service: { namespace: match[1] as string, name: match[2] as string, port: match[3] ?? 'http-metrics' } };
}

export function describeSource(source: MetricsSource): string {
  if ('url' in source) return typeof source.url === 'string' ? source.url : (source.url() ?? 'the router (not started yet)');
  return `service ${source.service.namespace}/${source.service.name}:${source.service.port} (through the API server)`;
}

export async function readMetrics(source: MetricsSource, client: KubeClient): Promise<MetricSample[]> {
  if ('url' in source) {
    const url = typeof source.url === 'string' ? source.url : source.url();
    if (url === undefined) throw new Error('the router has not started yet');
    return readRouterMetrics(url);
  }
  const { namespace, name, port } = source.service;
  try {
    const body = await client.stream({ path: `/api/v1/namespaces/${namespace}/services/${name}:${port}/proxy/metrics`, accept: 'text/plain' });
    let text = '';
    for await (const chunk of body) text += String(chunk);
    return parsePrometheusText(text);
  } catch (error) {
    if (isApiError(error, 403)) throw new Error(`you may not read the router's metrics (get services/proxy in ${namespace}): ${error.message}`);
    throw error;
  }
}
