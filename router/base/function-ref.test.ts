import { describe, expect, it } from 'vitest';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { parseFunctionRef, resolveFunctionRef, type FunctionRefConfig } from './function-ref.ts';
import { isClusterServiceHost } from '../../lib/function-client/service-address.ts';

const policy = { ...DEFAULT_FUNCTION_URL_POLICY, clusterDomain: 'corp.internal' };
const serviceRef = parseFunctionRef({ name: 'labeller', namespace: 'fns', port: 8080 }) as FunctionRefConfig;
const knativeRef = parseFunctionRef({ apiVersion: 'serving.knative.dev/v1', name: 'labeller', namespace: 'fns', path: '/reconcile' }) as FunctionRefConfig;
const service = (ports: number[]) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'labeller', namespace: 'fns' }, spec: { ports: ports.map((port) => ({ port })) } });
const ksvc = (url?: string) => ({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'labeller', namespace: 'fns' }, status: url ? { address: { url } } : {} });

describe('resolveFunctionRef', () => {
  it('builds a Service URL in the configured cluster domain', () => {
    expect(resolveFunctionRef(serviceRef, service([80, 8080]), policy)).toEqual({ ok: true, url: 'http://labeller.fns.svc.corp.internal:8080/' });
  });

  it('takes a Knative Service URL from status.address.url, with the path', () => {
    expect(resolveFunctionRef(knativeRef, ksvc('http://labeller.fns.svc.corp.internal'), policy)).toEqual({ ok: true, url: 'http://labeller.fns.svc.corp.internal/reconcile' });
    expect(resolveFunctionRef(knativeRef, ksvc('http://labeller.fns.svc.corp.internal/'), policy)).toMatchObject({ url: 'http://labeller.fns.svc.corp.internal/reconcile' });
  });

  it('says why a reference does not resolve', () => {
    expect(resolveFunctionRef(serviceRef, undefined, policy)).toEqual({ ok: false, reason: 'FunctionRefNotFound', message: 'Service fns/labeller does not exist' });
    expect(resolveFunctionRef(serviceRef, service([80]), policy)).toEqual({ ok: false, reason: 'FunctionRefInvalid', message: 'Service fns/labeller has no port 8080 (it has 80)' });
    expect(resolveFunctionRef(knativeRef, ksvc(), policy)).toMatchObject({ ok: false, reason: 'FunctionRefNotReady', message: 'Knative Service fns/labeller has no status.address.url yet' });
  });

  it('refuses a Knative URL the function URL policy refuses', () => {
    const result = resolveFunctionRef(knativeRef, ksvc('http://169.254.169.254'), policy);
    expect(result).toMatchObject({ ok: false, reason: 'FunctionRefInvalid' });
    const apiServer = parseFunctionRef({ name: 'kubernetes', namespace: 'default', port: 443 }) as FunctionRefConfig;
    expect(resolveFunctionRef(apiServer, { ...service([443]), metadata: { name: 'kubernetes', namespace: 'default' } }, policy)).toMatchObject({ ok: false, reason: 'FunctionRefInvalid' });
  });
});

describe('parseFunctionRef', () => {
  it.each([
    [{ name: 'a', namespace: 'b' }, 'spec.function.ref.port', /port number/],
    [{ apiVersion: 'serving.knative.dev/v1', name: 'a', namespace: 'b', port: 80 }, 'spec.function.ref.port', /not used for a Knative Service/],
    [{ apiVersion: 'apps/v1', name: 'a', namespace: 'b', port: 80 }, 'spec.function.ref.apiVersion', /not supported/],
    [{ name: 'A', namespace: 'b', port: 80 }, 'spec.function.ref.name', /DNS label/],
    [{ name: 'a', port: 80 }, 'spec.function.ref.namespace', /DNS label/],
    [{ name: 'a', namespace: 'b', port: 80, path: 'reconcile' }, 'spec.function.ref.path', /start with/],
  ])('names the bad field of %j', (ref, field, problem) => {
    const parsed = parseFunctionRef(ref);
    expect(parsed).toMatchObject({ field });
    expect('problem' in parsed && parsed.problem).toMatch(problem);
  });
});

describe('isClusterServiceHost', () => {
  it('matches <svc>.<ns>.svc and <svc>.<ns>.svc.<domain> only', () => {
    expect(isClusterServiceHost('fn.ns.svc', 'cluster.local')).toBe(true);
    expect(isClusterServiceHost('fn.ns.svc.cluster.local', 'cluster.local')).toBe(true);
    expect(isClusterServiceHost('fn.ns.svc.other.domain', 'cluster.local')).toBe(false);
    expect(isClusterServiceHost('example.com', 'cluster.local')).toBe(false);
  });
});
