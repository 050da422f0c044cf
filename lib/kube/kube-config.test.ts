import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { kubeconfigDocument, loadKubeConfig, simpleKubeconfig, type HttpsOptions } from './kube-config.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function kubeconfigFile(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
  await writeFile(join(dir, 'token'), 'file-token\n');
  await writeFile(join(dir, 'ca.crt'), 'CA FROM FILE');
  const file = join(dir, 'config');
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'dev',
      clusters: [{ name: 'local', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': b64('CA'), ...cluster } }],
      users: [{ name: 'admin', user }],
      contexts: [
        { name: 'dev', context: { cluster: 'local', user: 'admin' } },
        { name: 'other', context: { cluster: 'local', user: 'admin' } },
      ],
    }),
  );
  return file;
}

async function applied(file: string): Promise<HttpsOptions & { server?: string }> {
  const credentials = await loadKubeConfig({ kubeconfig: file });
  const options: HttpsOptions = {};
  await credentials.applyToHTTPSOptions(options);
  return { ...options, server: credentials.getCurrentCluster()?.server };
}

describe('loadKubeConfig without client-node', () => {
  it('reads client certificates and the CA from inline data', async () => {
    const options = await applied(await kubeconfigFile({ 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }));
    expect(options.server).toBe('https://127.0.0.1:6443');
    expect([String(options.ca), String(options.cert), String(options.key)]).toEqual(['CA', 'CERT', 'KEY']);
    expect(options.headers).toBeUndefined();
  });

  it('reads a token file (relative to the kubeconfig) again on every refresh, and a CA file', async () => {
    const file = await kubeconfigFile({ tokenFile: 'token' }, { 'certificate-authority-data': undefined, 'certificate-authority': 'ca.crt' });
    const options = await applied(file);
    expect(options.headers).toEqual({ Authorization: 'Bearer file-token' });
    expect(String(options.ca)).toBe('CA FROM FILE');
    await writeFile(join(file, '..', 'token'), 'rotated');
    const again: HttpsOptions = {};
    await (await loadKubeConfig({ kubeconfig: file })).applyToHTTPSOptions(again);
    expect(again.headers).toEqual({ Authorization: 'Bearer rotated' });
  });

  it('honours insecure-skip-tls-verify and tls-server-name', async () => {
    const options = await applied(await kubeconfigFile({ token: 't' }, { 'insecure-skip-tls-verify': true, 'tls-server-name': 'api.internal' }));
    expect(options.rejectUnauthorized).toBe(false);
    expect(options.servername).toBe('api.internal');
  });

  it('leaves exec plugins and proxies to client-node', async () => {
    expect(await simpleKubeconfig(await kubeconfigFile({ exec: { command: 'get-token', apiVersion: 'client.authentication.k8s.io/v1' } }))).toBeUndefined();
    expect(await simpleKubeconfig(await kubeconfigFile({ token: 't' }, { 'proxy-url': 'http://proxy:3128' }))).toBeUndefined();
  });

  it('reads a JSON kubeconfig as it reads the same one in YAML', async () => {
    const yamlFile = await kubeconfigFile({ 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }, { 'tls-server-name': 'api.internal' });
    const jsonFile = `${yamlFile}.json`;
    await writeFile(jsonFile, `\n  ${JSON.stringify(parse(await readFile(yamlFile, 'utf8')), null, 2)}`);
    const fromJson = await applied(jsonFile);
    expect([String(fromJson.ca), String(fromJson.cert), String(fromJson.key), fromJson.servername, fromJson.server]).toEqual(['CA', 'CERT', 'KEY', 'api.internal', 'https://127.0.0.1:6443']);
    expect(fromJson).toEqual(await applied(yamlFile));
  });

  it('parses a JSON kubeconfig without loading yaml', async () => {
    let yamlLoads = 0;
    vi.resetModules();
    vi.doMock('yaml', async (importOriginal) => {
      yamlLoads++;
      return importOriginal();
    });
    try {
      const fresh = await import('./kube-config.ts');
      expect(await fresh.kubeconfigDocument('{"apiVersion": "v1"}')).toEqual({ apiVersion: 'v1' });
      expect(yamlLoads).toBe(0);
      expect(await fresh.kubeconfigDocument('apiVersion: v1')).toEqual({ apiVersion: 'v1' });
      expect(yamlLoads).toBe(1);
    } finally {
      vi.doUnmock('yaml');
      vi.resetModules();
    }
  });

  it('reads a YAML flow mapping that is not JSON, and refuses a document neither reads', async () => {
    expect(await kubeconfigDocument('{apiVersion: v1, kind: Config}')).toEqual({ apiVersion: 'v1', kind: 'Config' });
    expect(await kubeconfigDocument('{"apiVersion": "v1"}')).toEqual({ apiVersion: 'v1' });
    await expect(kubeconfigDocument('{"apiVersion": [}')).rejects.toThrow();
  });

  it('selects a named context and names a missing one in the error', async () => {
    const file = await kubeconfigFile({ token: 't' });
    expect((await loadKubeConfig({ kubeconfig: file, context: 'other' })).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    await expect(loadKubeConfig({ kubeconfig: file, context: 'nope' })).rejects.toThrow('kubeconfig: no context named "nope"');
    await expect(loadKubeConfig({ kubeconfig: '/nonexistent/config' })).rejects.toThrow('kubeconfig: file "/nonexistent/config" does not exist');
  });
});
