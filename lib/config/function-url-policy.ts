// Where a Loop or an AdmissionHook may send objects: the router's and the gateway's re-check of the chart's
// admission policies (charts/kubeloop/templates/*-admission-policy.yaml); all must accept the same URLs.
import { isIP } from 'node:net';
import { pickSetting, settingBoolean, type FlagValues } from './settings.ts';

export interface FunctionUrlPolicy {
  /** Cluster DNS domain: Service hosts end in .svc or .svc.<clusterDomain>. */
  clusterDomain: string;
  /** Further hosts a function may live at: exact names or "*.suffix" (any name under suffix). */
  allowedHosts: readonly string[];
  /** `kubeloop dev` and tests: functions on 127.0.0.1 / localhost. Never in a cluster. */
  allowLoopback: boolean;
}

export const DEFAULT_FUNCTION_URL_POLICY: FunctionUrlPolicy = { clusterDomain: 'cluster.local', allowedHosts: [], allowLoopback: false };

/**
 * The URL's shape, checked before any parser reads it, so the API server (Go) and the router (WHATWG)
 * agree on the host: a scheme, a host of letters, digits, dots and hyphens, an optional port, then a path.
 * No user info, no brackets (IPv6 literals), no backslashes anywhere.
 */
const URL_SHAPE = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[^\\\s]*)?$/;
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain']);

/** Why the URL is refused, or undefined when the policy allows it. */
export function functionUrlProblem(raw: string, policy: FunctionUrlPolicy): string | undefined {
  if (!URL_SHAPE.test(raw)) return 'must be http(s)://<host>[:port][/path] with a DNS host name (no user info, IPv6 literal or backslash)';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  // WHATWG normalises numeric hosts (2130706433, 0x7f.1) to dotted IPv4, so isIP sees through them.
  const host = url.hostname.toLowerCase();
  if (isIP(host) !== 0) {
    if (policy.allowLoopback && isLoopbackIp(host)) return undefined;
    return `host ${host} is an IP literal; name a cluster Service (<name>.<namespace>.svc)`;
  }
  if (LOOPBACK_NAMES.has(host)) return policy.allowLoopback ? undefined : `host ${host} is loopback (allowed only in dev mode)`;
  if (isApiServerHost(host, policy.clusterDomain)) return `host ${host} is the Kubernetes API server`;
  if (isServiceHost(host, policy.clusterDomain)) return undefined;
  if (policy.allowedHosts.some((pattern) => hostMatches(host, pattern))) return undefined;
  return `host ${host} is not a cluster Service (<name>.<namespace>.svc or .svc.${policy.clusterDomain}) nor in the allowed hosts`;
}

function isLoopbackIp(host: string): boolean {
  return /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** <service>.<namespace>.svc or <service>.<namespace>.svc.<domain>: exactly two labels before "svc". */
function isServiceHost(host: string, clusterDomain: string): boolean {
  const label = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
  const domain = clusterDomain.toLowerCase().replace(/\./g, '\\.');
  return new RegExp(`^${label}\\.${label}\\.svc(\\.${domain})?$`).test(host);
}

function isApiServerHost(host: string, clusterDomain: string): boolean {
  const domain = clusterDomain.toLowerCase();
  return ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${domain}`].includes(host);
}

/** "name.example.com" matches itself; "*.example.com" matches any name ending in ".example.com". */
export function hostMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  return p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p;
}

/** The flags both the router and the gateway read the policy from. */
export const FUNCTION_URL_FLAG_OPTIONS = {
  'cluster-domain': { type: 'string' },
  'function-hosts': { type: 'string' },
  'allow-loopback-functions': { type: 'boolean' },
} as const;

export const FUNCTION_URL_USAGE = `  --cluster-domain ${DEFAULT_FUNCTION_URL_POLICY.clusterDomain}    function URLs must be <svc>.<ns>.svc[.<domain>] ... (KUBELOOP_CLUSTER_DOMAIN)
  --function-hosts h1,*.h2          ... or one of these hosts (KUBELOOP_FUNCTION_HOSTS; the chart's loopAdmission.allowedHosts)
  --allow-loopback-functions        also 127.0.0.1 / localhost: for kubeloop dev and tests only (KUBELOOP_ALLOW_LOOPBACK_FUNCTIONS)`;

/** Reads --cluster-domain, --function-hosts and --allow-loopback-functions (or their variables). */
export function readFunctionUrlPolicy(values: FlagValues, env: NodeJS.ProcessEnv): FunctionUrlPolicy {
  const clusterDomain = pickSetting(values, env, 'cluster-domain', 'KUBELOOP_CLUSTER_DOMAIN');
  if (clusterDomain && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(clusterDomain.value)) {
    throw new Error(`${clusterDomain.setting}: "${clusterDomain.value}" is not a DNS domain`);
  }
  const hosts = pickSetting(values, env, 'function-hosts', 'KUBELOOP_FUNCTION_HOSTS');
  const loopback = values['allow-loopback-functions'];
  return {
    clusterDomain: clusterDomain?.value ?? DEFAULT_FUNCTION_URL_POLICY.clusterDomain,
    allowedHosts: hosts ? parseHostPatterns(hosts.value, hosts.setting) : [],
    allowLoopback: typeof loopback === 'boolean' ? loopback : settingBoolean(pickSetting(values, env, 'allow-loopback-functions', 'KUBELOOP_ALLOW_LOOPBACK_FUNCTIONS'), false),
  };
}

export function parseHostPatterns(value: string, setting: string): string[] {
  const hosts = value.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const host of hosts) {
    if (!/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(host)) {
      throw new Error(`${setting}: "${host}" is not a host name or *.<domain> (with at least one dot)`);
    }
    if (isIP(host) !== 0) throw new Error(`${setting}: "${host}" is an IP address; functions are named by host name`);
  }
  return hosts;
}
