// Resolves apiVersion + kind to a resource (plural, namespaced) through the API server's discovery endpoints.
import type { KubeClient } from './kube-client.ts';
import { isApiError } from './kube-client.ts';
import { groupVersionPath, kindKey, splitApiVersion, type ResourceInfo } from './resource-paths.ts';

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
}
interface APIResourceList {
  resources?: APIResource[];
}

export class UnknownKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
    detail: string,
  ) {
    super(`unknown kind ${kind} in ${apiVersion}: ${detail}`);
    this.name = 'UnknownKindError';
  }
}

/** Caches one discovery document per group/version; a miss refetches, because CRDs appear at run time. */
export class ResourceDiscovery {
  readonly #cache = new Map<string, Promise<Map<string, ResourceInfo>>>();
  constructor(private readonly client: KubeClient) {}

  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    let kinds = await this.#groupVersion(apiVersion, false);
    let info = kinds.get(kind);
    if (!info) {
      kinds = await this.#groupVersion(apiVersion, true);
      info = kinds.get(kind);
    }
    if (!info) throw new UnknownKindError(apiVersion, kind, `the API server serves no such kind (${kindKey(apiVersion, kind)})`);
    return info;
  }

  #groupVersion(apiVersion: string, refresh: boolean): Promise<Map<string, ResourceInfo>> {
    const cached = this.#cache.get(apiVersion);
    if (cached && !refresh) return cached;
    const loading = this.#load(apiVersion);
    this.#cache.set(apiVersion, loading);
    // A failed load must not poison the cache.
    loading.catch(() => this.#cache.delete(apiVersion));
    return loading;
  }

  async #load(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    const { group, version } = splitApiVersion(apiVersion);
    let list: APIResourceList;
    try {
      list = await this.client.request<APIResourceList>({ path: groupVersionPath(apiVersion) });
    } catch (error) {
      if (isApiError(error, 404)) return new Map();
      throw error;
    }
    return parseResourceList(list, group, version);
  }
}

export function parseResourceList(list: APIResourceList, group: string, version: string): Map<string, ResourceInfo> {
  const kinds = new Map<string, ResourceInfo>();
  const apiVersion = group === '' ? version : `${group}/${version}`;
  for (const resource of list.resources ?? []) {
    if (resource.name.includes('/')) continue; // subresources such as pods/status
    kinds.set(resource.kind, { group, version, apiVersion, kind: resource.kind, plural: resource.name, namespaced: resource.namespaced });
  }
  return kinds;
}
