// KubeClient closed or destroyed with a request to the real API server in flight (a GET it answers slowly, an open
// watch, a write over node:http2): the request fails with KubeClientClosedError, close() resolves, and the process
// ends normally. Each case runs in a child process (test/support/kube-client-close-child.ts): a crash ends it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import type { CloseChildArgs, CloseChildResult, CloseScenario } from '../support/kube-client-close-child.ts';

let suite: ClusterSuite;
beforeAll(async () => {
  suite = await setupClusterSuite('kube-client-close');
});
afterAll(async () => {
  await suite?.cleanup();
});

async function runChild(scenario: CloseScenario, how: 'close' | 'destroy'): Promise<{ code: number | null; out: string; result: CloseChildResult | undefined }> {
  const args: CloseChildArgs = { kubeconfig: suite.kubeconfigPath, namespace: suite.namespace, scenario, how };
  const script = fileURLToPath(new URL('../support/kube-client-close-child.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = out.split('\n').find((l) => l.startsWith('{"outcome"'));
  return { code, out, result: line ? (JSON.parse(line) as CloseChildResult) : undefined };
}

describe('KubeClient close() and destroy() with a request to the API server in flight', () => {
  it.each([
    ['get', 'close', 'a GET the API server is still answering'],
    ['get', 'destroy', 'a GET the API server is still answering'],
    ['watch', 'close', 'an open watch'],
    ['watch', 'destroy', 'an open watch'],
    ['write', 'close', 'a write over node:http2 (http2Writes)'],
    ['write', 'destroy', 'a write over node:http2 (http2Writes)'],
  ] as const)('%s, %s(): %s fails with KubeClientClosedError, and the process ends normally', async (scenario, how, _what) => {
    const { code, out, result } = await runChild(scenario, how);
    expect(result, out).toBeDefined();
    const path = `/api/v1/namespaces/${suite.namespace}/configmaps`;
    expect(result).toEqual({
      outcome: { name: 'KubeClientClosedError', code: 'ERR_KUBELOOP_CLIENT_CLOSED', inFlight: true, message: `${scenario === 'write' ? 'POST' : 'GET'} ${path}: cut short: its KubeClient was closed while it was in flight` },
      closed: true,
    });
    expect(code, out).toBe(0);
  });
});
