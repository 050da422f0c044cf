// Reads the Kubernetes objects `kubeloop render` is given: YAML or JSON files, several documents or a
// kind: List each; every problem names the file and the document.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../lib/contract/types.ts';

export class InputError extends Error {
  override name = 'InputError';
}

function checkObject(value: unknown, where: string): KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(`${where}: want a Kubernetes object (a mapping), got ${Array.isArray(value) ? 'a list' : typeof value}`);
  const object = value as KubeObject;
  const missing = [!object.apiVersion && 'apiVersion', !object.kind && 'kind', !object.metadata?.name && 'metadata.name'].filter(Boolean);
  if (missing.length > 0) throw new InputError(`${where}: a Kubernetes object needs ${missing.join(', ')}`);
  return object;
}

/** Every object in the file, in order; `kind: List` is flattened. */
export function readObjects(file: string): KubeObject[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`${file}: cannot read: ${(error as Error).message}`);
  }
  const objects: KubeObject[] = [];
  for (const [index, doc] of parseAllDocuments(text).entries()) {
    const where = `${file} document ${index + 1}`;
    const problem = doc.errors[0];
    if (problem) throw new InputError(`${where}: not valid YAML: ${problem.message.split('\n')[0]}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const list = value as { kind?: unknown; items?: unknown };
    if (list.kind === 'List' || (typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items))) {
      (Array.isArray(list.items) ? list.items : []).forEach((item, i) => objects.push(checkObject(item, `${where} item ${i}`)));
    } else objects.push(checkObject(value, where));
  }
  return objects;
}
