// A kubeconfig that reaches the suite's API server as a ServiceAccount token, for tests that must run
// with exactly some RBAC (the chart's roles, or none at all) instead of the admin certificate.
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';

/** Writes `file` with the admin kubeconfig's cluster entry and `token` as user `user`; returns `file`. */
export async function writeTokenKubeconfig(adminKubeconfigPath: string, user: string, token: string, file: string): Promise<string> {
  const admin = parse(await readFile(adminKubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: Record<string, unknown> }> };
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: user, user: { token: token.trim() } }],
      contexts: [{ name: user, context: { cluster: 'local', user } }],
      'current-context': user,
    }),
    { mode: 0o600 },
  );
  return file;
}
