import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLoopsFile, readRouterConfig } from './router-config.ts';

/** The inline Loops `kubeloop router` reads for these flags (cli/commands/router.ts). */
const inlineLoops = (argv: string[]) => {
  const config = readRouterConfig(argv);
  return readLoopsFile(config.loopsFile!, config.urlPolicy);
};

describe('readRouterConfig', () => {
  it('has defaults, and flags win over the environment', () => {
    const config = readRouterConfig(['--qps', '20'], { KUBELOOP_API_QPS: '5', KUBELOOP_LEADER_ELECT: 'true', POD_NAMESPACE: 'kl', POD_NAME: 'router-0' });
    expect(config).toMatchObject({ port: 8081, qps: 20, burst: 1000, leaderElect: true, leaseNamespace: 'kl', identity: 'router-0', leaseDurationSeconds: 15, maxActionsPerReply: 1000, maxReplyBytes: 16 * 1024 * 1024 });
    expect(readRouterConfig(['--max-actions-per-reply', '50'], { KUBELOOP_MAX_REPLY_BYTES: '65536' })).toMatchObject({ maxActionsPerReply: 50, maxReplyBytes: 65536 });
  });
  it('reads the request caps and the request bytes in flight, with their defaults', () => {
    expect(readRouterConfig([])).toMatchObject({ requestCaps: { objectsPerEntry: 1000, objectsPerRequest: 2000, relatedBytesPerRequest: 8 * 1024 * 1024 }, maxRequestBytesInFlight: 32 * 1024 * 1024 });
    const set = readRouterConfig(['--max-related-objects-per-entry', '10', '--max-related-bytes-per-request', '65536'], { KUBELOOP_MAX_RELATED_OBJECTS_PER_REQUEST: '20', KUBELOOP_MAX_REQUEST_BYTES_IN_FLIGHT: '1048576' });
    expect(set).toMatchObject({ requestCaps: { objectsPerEntry: 10, objectsPerRequest: 20, relatedBytesPerRequest: 65536 }, maxRequestBytesInFlight: 1048576 });
    expect(() => readRouterConfig(['--max-request-bytes-in-flight', '10'])).toThrow('--max-request-bytes-in-flight: "10"');
  });
  it('reads --cluster-wide-watch or KUBELOOP_CLUSTER_WIDE_WATCH as group resources, none by default', () => {
    expect(readRouterConfig([])).toMatchObject({ clusterWideWatches: [] });
    expect(readRouterConfig(['--cluster-wide-watch=configmaps,deployments.apps'], { KUBELOOP_CLUSTER_WIDE_WATCH: 'secrets' }).clusterWideWatches).toEqual([
      { resource: 'configmaps', group: '' },
      { resource: 'deployments', group: 'apps' },
    ]);
    expect(readRouterConfig([], { KUBELOOP_CLUSTER_WIDE_WATCH: 'secrets' }).clusterWideWatches).toEqual([{ resource: 'secrets', group: '' }]);
    expect(() => readRouterConfig(['--cluster-wide-watch', 'Deployment'])).toThrow('--cluster-wide-watch: "Deployment" is not a resource[.group]');
  });
  it('switches sharding on by flag or KUBELOOP_SHARDING, off by default, never together with leader election', () => {
    expect(readRouterConfig([])).toMatchObject({ sharding: false, leaderElect: false });
    expect(readRouterConfig(['--sharding'])).toMatchObject({ sharding: true, leaseName: 'kubeloop-router' });
    expect(readRouterConfig([], { KUBELOOP_SHARDING: 'true', KUBELOOP_LEASE_NAME: 'team-a' })).toMatchObject({ sharding: true, leaseName: 'team-a' });
    // Server-side filtering of each member's share where the API server supports it, unless switched off.
    expect(readRouterConfig(['--sharding'])).toMatchObject({ shardingServerSide: true });
    expect(readRouterConfig(['--sharding', '--sharding-server-side=false'])).toMatchObject({ shardingServerSide: false });
    expect(readRouterConfig(['--sharding'], { KUBELOOP_SHARDING_SERVER_SIDE: 'false' })).toMatchObject({ shardingServerSide: false });
    expect(() => readRouterConfig(['--sharding', '--leader-elect'])).toThrow('--sharding and --leader-elect exclude each other');
    expect(() => readRouterConfig([], { KUBELOOP_SHARDING: 'yes please' })).toThrow('KUBELOOP_SHARDING');
  });
  it('sends writes over node:http2 unless --http2-writes=false or KUBELOOP_HTTP2_WRITES=false, the flag winning', () => {
    expect(readRouterConfig([])).toMatchObject({ http2Writes: true });
    expect(readRouterConfig(['--http2-writes=false'])).toMatchObject({ http2Writes: false });
    expect(readRouterConfig([], { KUBELOOP_HTTP2_WRITES: 'false' })).toMatchObject({ http2Writes: false });
    expect(readRouterConfig(['--http2-writes', 'true'], { KUBELOOP_HTTP2_WRITES: 'false' })).toMatchObject({ http2Writes: true });
    expect(() => readRouterConfig(['--http2-writes=off'])).toThrow('--http2-writes: "off" is not true or false');
  });
  it('fills caches by WatchList unless --watch-list=false or KUBELOOP_WATCH_LIST=false', () => {
    expect(readRouterConfig([])).toMatchObject({ watchList: true });
    expect(readRouterConfig(['--watch-list=false'])).toMatchObject({ watchList: false });
    expect(readRouterConfig([], { KUBELOOP_WATCH_LIST: 'false' })).toMatchObject({ watchList: false });
    expect(() => readRouterConfig(['--watch-list=off'])).toThrow('--watch-list: "off" is not true or false');
  });
  it('reads the ops server settings as function and webhook do, with its own port variable', () => {
    expect(readRouterConfig([], { KUBELOOP_ROUTER_PORT: '9090', PORT: '7070', KUBELOOP_DRAIN_DELAY_SECONDS: '5' })).toMatchObject({ port: 9090, drainDelaySeconds: 5, logLevel: 'info' });
    expect(readRouterConfig(['--drain-delay-seconds', '10', '--log-level', 'debug'])).toMatchObject({ drainDelaySeconds: 10, logLevel: 'debug' });
    expect(() => readRouterConfig(['--drain-delay-seconds', '999'])).toThrow('--drain-delay-seconds: "999"');
  });
  it('names the bad setting', () => {
    expect(() => readRouterConfig(['--port', 'eighty'])).toThrow('--port: "eighty" is not an integer');
    expect(() => readRouterConfig([], { KUBELOOP_API_BURST: '0' })).toThrow('KUBELOOP_API_BURST: "0"');
    expect(() => readRouterConfig([], { KUBELOOP_LEADER_ELECT: 'maybe' })).toThrow('KUBELOOP_LEADER_ELECT');
    expect(() => readRouterConfig(['--log-level', 'loud'])).toThrow('--log-level');
    expect(() => readRouterConfig(['--max-actions-per-reply', '0'])).toThrow('--max-actions-per-reply: "0" is not an integer between 1 and 100000');
    expect(() => readRouterConfig(['extra'])).toThrow('unexpected argument "extra"');
    expect(() => readRouterConfig(['--loop-selector', 'team'])).toThrow('--loop-selector: "team" is not key=value');
  });
  it('reads the function URL policy, the requeue floor and the per-Loop budget', () => {
    const config = readRouterConfig(['--function-hosts', 'Fn.example.com, *.fns.example.org', '--min-requeue-seconds', '2', '--loop-qps', '5'], {
      KUBELOOP_CLUSTER_DOMAIN: 'corp.internal',
      KUBELOOP_LOOP_API_BURST: '7',
    });
    expect(config).toMatchObject({
      urlPolicy: { clusterDomain: 'corp.internal', allowedHosts: ['fn.example.com', '*.fns.example.org'], allowLoopback: false },
      minRequeueSeconds: 2,
      loopQps: 5,
      loopBurst: 7,
    });
    // Unset, the router picks the period (hourly while it watches RBAC); set, it is the period.
    expect(readRouterConfig([]).accessReviewSeconds).toBeUndefined();
    expect(readRouterConfig([], { KUBELOOP_ACCESS_REVIEW_SECONDS: '300' }).accessReviewSeconds).toBe(300);
    expect(readRouterConfig([]).minRequeueSeconds).toBe(1);
    expect(() => readRouterConfig(['--function-hosts', '169.254.169.254'])).toThrow('is an IP address');
    expect(readRouterConfig(['--connect-services-to', '127.0.0.1']).connectServicesTo).toBe('127.0.0.1');
    expect(() => readRouterConfig(['--connect-services-to', 'localhost'])).toThrow('--connect-services-to: "localhost" is not an IP address');
    expect(() => readRouterConfig(['--function-hosts', 'http://x.example.com'])).toThrow('--function-hosts: "http://x.example.com" is not a host name');
    expect(() => readRouterConfig(['--min-requeue-seconds', '0'])).toThrow('--min-requeue-seconds');
    expect(() => readRouterConfig(['--cluster-domain', 'Bad_Domain'])).toThrow('--cluster-domain');
  });
  it('reads V8 heap growing factor: 50 % unless a flag or KUBELOOP_HEAP_GROWING_PERCENT says otherwise', () => {
    expect(readRouterConfig([]).heapGrowingPercent).toBe(50);
    expect(readRouterConfig(['--heap-growing-percent', '0']).heapGrowingPercent).toBe(0);
    expect(readRouterConfig([], { KUBELOOP_HEAP_GROWING_PERCENT: '30' }).heapGrowingPercent).toBe(30);
    expect(() => readRouterConfig(['--heap-growing-percent', '-1'])).toThrow('--heap-growing-percent');
    expect(() => readRouterConfig([], { KUBELOOP_HEAP_GROWING_PERCENT: 'lots' })).toThrow('KUBELOOP_HEAP_GROWING_PERCENT');
  });
  it('reads the fairness settings: defaults, a weight map, and a bad weight named with its flag', () => {
    expect(readRouterConfig([])).toMatchObject({ loopQps: 0, maxCallsInFlight: 256, fairApiQps: 500, fairApiBurst: 1000, tenantMetricsLabels: 50 });
    const config = readRouterConfig(['--max-calls-in-flight', '0', '--tenant-weights', 'team-a=4, cluster=2'], { KUBELOOP_FAIR_API_QPS: '0' });
    expect(config.maxCallsInFlight).toBe(0);
    expect(config.fairApiQps).toBe(0);
    expect([...config.tenantWeights]).toEqual([['team-a', 4], ['cluster', 2]]);
    expect(() => readRouterConfig(['--tenant-weights', 'team-a=heavy'])).toThrow('--tenant-weights: tenant weight "team-a=heavy" must be <namespace>=<positive number>');
    expect(() => readRouterConfig([], { KUBELOOP_TENANT_WEIGHTS: 'team-a=-1' })).toThrow('KUBELOOP_TENANT_WEIGHTS');
  });
  it('reads a Loop selector from the flag or the environment', () => {
    expect(readRouterConfig(['--loop-selector', 'team=a, kubeloop.dev/shard=2']).loopSelector).toEqual({ team: 'a', 'kubeloop.dev/shard': '2' });
    expect(readRouterConfig([], { KUBELOOP_LOOP_SELECTOR: 'x=y' }).loopSelector).toEqual({ x: 'y' });
  });
  it('reads inline Loops and names the bad document and field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loops-'));
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'apiVersion: kubeloop.dev/v1alpha1\nkind: ClusterLoop\nmetadata: { name: a }\nspec: { for: { apiVersion: v1, kind: Pod }, serviceAccount: { namespace: ns, name: a }, function: { url: "http://127.0.0.1:9000/" } }\n');
    expect((await inlineLoops(['--loops', good, '--allow-loopback-functions']))[0]?.metadata.name).toBe('a');
    await expect(inlineLoops(['--loops', good])).rejects.toThrow('host 127.0.0.1 is an IP literal');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'kind: ClusterLoop\nmetadata: { name: a }\nspec: { for: { apiVersion: v1, kind: Pod } }\n');
    await expect(inlineLoops(['--loops', bad])).rejects.toThrow('--loops: ' + bad + ' document 1: Loop a: spec.function is required ({ url } or { ref })');
  });
  it('bounds the flight recorder per object, per tenant and in all, and the Loops run per tenant', () => {
    expect(readRouterConfig([]).history).toEqual({ perObject: 10, objects: 1000, objectsPerTenant: 500 });
    expect(readRouterConfig([]).maxLoopsPerTenant).toBe(50);
    expect(readRouterConfig(['--max-loops-per-tenant', '0']).maxLoopsPerTenant).toBe(0);
    expect(() => readRouterConfig(['--max-loops-per-tenant', '-1'])).toThrow('--max-loops-per-tenant');
    expect(readRouterConfig([]).tenantLoopStarts).toEqual({ qps: 2, burst: 20 });
    expect(readRouterConfig(['--tenant-loop-starts-qps', '0.5'], { KUBELOOP_TENANT_LOOP_STARTS_BURST: '5' }).tenantLoopStarts).toEqual({ qps: 0.5, burst: 5 });
    expect(() => readRouterConfig(['--tenant-loop-starts-burst', '0'])).toThrow('--tenant-loop-starts-burst');
    expect(readRouterConfig(['--history-objects-per-tenant', '50']).history.objectsPerTenant).toBe(50);
    expect(readRouterConfig([], { KUBELOOP_HISTORY_OBJECTS_PER_TENANT: '7' }).history.objectsPerTenant).toBe(7);
    expect(() => readRouterConfig(['--history-objects-per-tenant', '0'])).toThrow('--history-objects-per-tenant');
  });

  it('writes rotated history files only with a directory, with bounded size and count', () => {
    expect(readRouterConfig([]).historyFiles).toBeUndefined();
    expect(readRouterConfig(['--history-dir', '/var/lib/h']).historyFiles).toEqual({ dir: '/var/lib/h', maxBytes: 10 * 1024 * 1024, files: 5 });
    expect(readRouterConfig([], { KUBELOOP_HISTORY_DIR: '/h', KUBELOOP_HISTORY_FILE_MAX_BYTES: '65536', KUBELOOP_HISTORY_FILES: '2' }).historyFiles).toEqual({ dir: '/h', maxBytes: 65536, files: 2 });
    expect(() => readRouterConfig(['--history-files', '3'])).toThrow('--history-files is set but --history-dir');
    expect(() => readRouterConfig(['--history-dir', '/h', '--history-files', '0'])).toThrow('--history-files: "0" is not an integer between 1 and 100');
    expect(() => readRouterConfig(['--history-dir', '/h', '--history-file-max-bytes', '100'])).toThrow('--history-file-max-bytes');
    expect(() => readRouterConfig(['--history-dir', '/h', '--history-per-object', '0'])).toThrow('--history-dir: the history files need the flight recorder');
  });

  it('serves the history API only with a port and both certificate files', () => {
    expect(readRouterConfig([]).historyApi).toBeUndefined();
    expect(readRouterConfig(['--history-api-port', '8443', '--history-tls-cert-file', '/c', '--history-tls-key-file', '/k']).historyApi).toEqual({ port: 8443, certFile: '/c', keyFile: '/k' });
    expect(readRouterConfig([], { KUBELOOP_HISTORY_API_PORT: '9443', KUBELOOP_HISTORY_TLS_CERT_FILE: '/c', KUBELOOP_HISTORY_TLS_KEY_FILE: '/k' }).historyApi).toMatchObject({ port: 9443 });
    expect(() => readRouterConfig(['--history-api-port', '8443'])).toThrow('--history-api-port: the history API serves HTTPS only');
    expect(() => readRouterConfig(['--history-tls-cert-file', '/c'])).toThrow('--history-tls-cert-file is set but --history-api-port');
    expect(() => readRouterConfig(['--history-api-port', 'x', '--history-tls-cert-file', '/c', '--history-tls-key-file', '/k'])).toThrow('--history-api-port');
  });

  it('reads namespaced Loops inline too, and names one that reaches out of its namespace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loops-'));
    const file = join(dir, 'team-a.yaml');
    const loop = (sa: string) => `kind: Loop\nmetadata: { name: a, namespace: team-a }\nspec: { for: { apiVersion: v1, kind: Pod }, serviceAccount: ${sa}, function: { url: "http://127.0.0.1:9000/" } }\n`;
    writeFileSync(file, loop('{ name: a }'));
    expect((await inlineLoops(['--loops', file, '--allow-loopback-functions']))[0]?.metadata.namespace).toBe('team-a');
    writeFileSync(file, loop('{ name: a, namespace: team-b }'));
    await expect(inlineLoops(['--loops', file, '--allow-loopback-functions'])).rejects.toThrow('document 1: Loop team-a/a: spec.serviceAccount.namespace "team-b": a Loop acts as a ServiceAccount of its own namespace (team-a) only');
    writeFileSync(file, 'kind: Secret\nmetadata: { name: a }\n');
    await expect(inlineLoops(['--loops', file])).rejects.toThrow('kind "Secret" is not ClusterLoop or Loop');
  });
});
