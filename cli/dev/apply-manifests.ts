// Server-side apply of YAML manifests (CRDs, Loops, samples) through the shared Kubernetes client, so
// `kubeloop dev` needs no kubectl against an existing cluster.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { isApiError, objectPath, type KubeClient, type ResourceDiscovery } from '../../lib/kube/index.ts';

export const DEV_FIELD_MANAGER = 'kubeloop-dev';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Every YAML document of the *.yaml files directly in dir (not its subdirectories), in file-name order. */
export async function readManifests(dir: string): Promise<Array<{ file: string; manifest: Manifest }>> {
  let files: string[];
  try {
    // A single file (kubeloop dev --loop loop.yaml) reads as a folder holding only it.
    if ((await stat(dir)).isFile()) return readManifestFile(dir);
    files = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => e.name).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const out: Array<{ file: string; manifest: Manifest }> = [];
  for (const name of files) out.push(...(await readManifestFile(join(dir, name))));
  return out;
}

async function readManifestFile(file: string): Promise<Array<{ file: string; manifest: Manifest }>> {
  const out: Array<{ file: string; manifest: Manifest }> = [];
  for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const manifest = doc.toJS() as Manifest | null;
    if (manifest === null) continue;
    if (!manifest.apiVersion || !manifest.kind || !manifest.metadata?.name) throw new Error(`${file}: a document lacks apiVersion, kind or metadata.name`);
    out.push({ file, manifest });
  }
  return out;
}

/** Creates or updates the object with server-side apply (force: the dev session owns these fields). */
export async function applyManifest(client: KubeClient, discovery: ResourceDiscovery, manifest: Manifest, defaultNamespace = 'default'): Promise<Manifest> {
  const resource = await discovery.resolve(manifest.apiVersion, manifest.kind);
  const namespace = resource.namespaced ? (manifest.metadata.namespace ?? defaultNamespace) : undefined;
  const body = { ...manifest, metadata: { ...manifest.metadata, ...(namespace ? { namespace } : {}) } };
  return client.request<Manifest>({
    method: 'PATCH',
    path: objectPath(resource, manifest.metadata.name, namespace),
    query: { fieldManager: DEV_FIELD_MANAGER, force: true },
    contentType: 'application/apply-patch+yaml',
    body,
  });
}

interface CrdStatus {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Waits until every named CRD reports Established, so its kinds can be applied and watched. */
export async function waitForCrdsEstablished(client: KubeClient, names: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      try {
        const crd = await client.request<CrdStatus>({ path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}` });
        if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      } catch (error) {
        if (!isApiError(error, 404)) throw error;
      }
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after ${timeoutMs / 1000}s`);
      await sleep(100);
    }
  }
}

/** Applies CustomResourceDefinitions and waits until all are Established; returns their names. */
export async function applyCrds(client: KubeClient, discovery: ResourceDiscovery, crds: Manifest[]): Promise<string[]> {
  for (const crd of crds) await applyManifest(client, discovery, crd);
  const names = crds.map((crd) => crd.metadata.name);
  await waitForCrdsEstablished(client, names);
  return names;
}

/** Deletes an object if it exists (dev-mode cleanup); 404 is fine. */
export async function deleteIfPresent(client: KubeClient, path: string): Promise<void> {
  try {
    await client.request({ method: 'DELETE', path });
  } catch (error) {
    if (!isApiError(error, 404)) throw error;
  }
}

/** Creates the namespace unless it exists (the samples' Loop ServiceAccounts live in kubeloop-system). */
export async function ensureNamespace(client: KubeClient, discovery: ResourceDiscovery, name: string): Promise<void> {
  await applyManifest(client, discovery, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}
