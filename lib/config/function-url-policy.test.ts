import { describe, expect, it } from 'vitest';
import { DEFAULT_FUNCTION_URL_POLICY, functionUrlProblem, hostMatches, type FunctionUrlPolicy } from './function-url-policy.ts';

const strict = DEFAULT_FUNCTION_URL_POLICY;
const dev: FunctionUrlPolicy = { ...strict, allowLoopback: true };
const listed: FunctionUrlPolicy = { ...strict, allowedHosts: ['fn.example.com', '*.functions.example.org'] };

describe('functionUrlProblem', () => {
  it('accepts cluster Service hosts with or without the cluster domain', () => {
    for (const url of [
      'http://kubeloop-podset.kubeloop-system.svc:8080/',
      'http://podset.team-a.svc/reconcile',
      'https://podset.team-a.svc.cluster.local/',
      'http://KUBELOOP-AT.kubeloop-system.svc:8080/',
    ]) {
      expect(functionUrlProblem(url, strict), url).toBeUndefined();
    }
  });
  it('refuses metadata, link-local, private and numeric IP literals however they are spelled', () => {
    for (const url of ['http://169.254.169.254/', 'http://10.0.0.1:8080/', 'http://2130706433/', 'http://0x7f.1/', 'http://0251.0376.0251.0376/']) {
      expect(functionUrlProblem(url, strict), url).toMatch(/IP literal/);
    }
    expect(functionUrlProblem('http://[::1]/', strict)).toMatch(/IPv6 literal/);
    expect(functionUrlProblem('http://[fd00:ec2::254]/', strict)).toMatch(/IPv6 literal/);
  });
  it('refuses loopback outside dev mode and allows only loopback in it', () => {
    expect(functionUrlProblem('http://127.0.0.1:8080/', strict)).toMatch(/IP literal/);
    expect(functionUrlProblem('http://localhost:8080/', strict)).toMatch(/loopback/);
    expect(functionUrlProblem('http://127.0.0.1:8080/', dev)).toBeUndefined();
    expect(functionUrlProblem('http://localhost:8080/', dev)).toBeUndefined();
    expect(functionUrlProblem('http://169.254.169.254/', dev)).toMatch(/IP literal/);
    expect(functionUrlProblem('http://10.1.2.3/', dev)).toMatch(/IP literal/);
  });
  it('refuses the API server under every Service name', () => {
    for (const host of ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']) {
      expect(functionUrlProblem(`https://${host}/api`, listed), host).toMatch(/API server|not a cluster Service/);
    }
    expect(functionUrlProblem('https://kubernetes.default.svc.corp.internal/', { ...strict, clusterDomain: 'corp.internal' })).toMatch(/API server/);
  });
  it('refuses shapes two URL parsers could read differently', () => {
    for (const url of ['http://evil@169.254.169.254/', 'http://fn.ns.svc\\@169.254.169.254/', 'http://fn.ns.svc/\\x', 'ftp://fn.ns.svc/', 'fn.ns.svc', 'http://fn.ns.svc:80:80/']) {
      expect(functionUrlProblem(url, strict), url).toMatch(/must be http/);
    }
  });
  it('refuses other names unless the allow-list matches them', () => {
    expect(functionUrlProblem('https://fn.example.com/', strict)).toMatch(/not a cluster Service/);
    expect(functionUrlProblem('https://fn.example.com/', listed)).toBeUndefined();
    expect(functionUrlProblem('https://a.b.functions.example.org/', listed)).toBeUndefined();
    expect(functionUrlProblem('https://functions.example.org/', listed)).toMatch(/not a cluster Service/);
    expect(functionUrlProblem('https://evilfunctions.example.org/', listed)).toMatch(/not a cluster Service/);
    // Three labels before .svc is not a Service name (pods.<ns>.svc and the like).
    expect(functionUrlProblem('http://a.b.c.svc/', strict)).toMatch(/not a cluster Service/);
  });
});

describe('hostMatches', () => {
  it('matches exact names and wildcard suffixes, never the bare suffix', () => {
    expect(hostMatches('fn.example.com', 'FN.example.com')).toBe(true);
    expect(hostMatches('x.example.com', '*.example.com')).toBe(true);
    expect(hostMatches('example.com', '*.example.com')).toBe(false);
    expect(hostMatches('xexample.com', '*.example.com')).toBe(false);
  });
});
