// Options of `kubeloop init`: the project's name, the kind it reconciles (or admits, with --admission) and
// the kinds it owns, checked up front so a typo is a usage error instead of a project the API server refuses.
import { basename } from 'node:path';
import type { KindRef } from '../../api/meta.ts';
import { childrenKey } from '../../lib/contract/children-key.ts';

export interface ProjectOptions {
  /** Function name: a DNS label, used for the package, the Loop, the image and the chart entry. */
  name: string;
  for: KindRef;
  owns: KindRef[];
  /** The kubeloop dependency of the generated package.json ("^0.1.0", "file:../kubeloop-0.1.0.tgz"). */
  kubeloopSpec: string;
  /** spec.related entries (kubeloop init --related): objects named by an annotation on the primary. */
  related: RelatedOption[];
  /** An admission function project of this type (`for` is then the kind it admits) instead of a reconcile one. */
  admission?: AdmissionType;
  /** A Python or Go project on that language's SDK instead of TypeScript (the default, when absent). */
  language?: OtherLanguage;
  /** `for` is a kind of the project's own: init writes its CustomResourceDefinition and TypeScript type. */
  crd?: boolean;
  /**
   * A ClusterLoop or ClusterAdmissionHook for a cluster admin (ServiceAccount in kubeloop-system, ClusterRole,
   * the chart's values.yaml) instead of the namespaced kind a namespace admin applies (docs/tenants.md).
   */
  cluster?: boolean;
}

export const OTHER_LANGUAGES = ['python', 'go'] as const;
export type OtherLanguage = (typeof OTHER_LANGUAGES)[number];

export type AdmissionType = 'validating' | 'mutating';

/** One spec.related entry of a generated Loop: objects of `ref` named by `annotation` on the primary. */
export interface RelatedOption {
  /** The key in request.related: the kind in lower case ("configmap"). */
  name: string;
  ref: KindRef;
  annotation: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** "v1/ConfigMap", "apps/v1/Deployment", "example.com/v1alpha1/Widget" -> { apiVersion, kind }. */
export function parseKindRef(text: string, flag: string): KindRef {
  const parts = text.split('/');
  const kind = parts.pop() ?? '';
  const version = parts.pop() ?? '';
  const group = parts.join('/');
  const problem = !KIND.test(kind)
    ? `"${kind}" is not a Kind (CamelCase, e.g. ConfigMap)`
    : !VERSION.test(version)
      ? `"${version}" is not an API version (v1, v1beta1, v1alpha1)`
      : group !== '' && !DNS_SUBDOMAIN.test(group)
        ? `"${group}" is not an API group (a DNS subdomain, e.g. apps or example.com)`
        : undefined;
  if (problem) throw new Error(`${flag} "${text}": ${problem}; want <apiVersion>/<Kind>, e.g. v1/ConfigMap or apps/v1/Deployment`);
  return { apiVersion: group === '' ? version : `${group}/${version}`, kind };
}

export interface RawInitOptions {
  dir: string;
  name?: string;
  for?: string;
  owns?: string[];
  related?: string[];
  kubeloopSpec?: string;
  admission?: string;
  language?: string;
  /** <group>/<version>/<Kind> of a kind to define (implies --for). */
  crd?: string;
  cluster?: boolean;
}

export function readProjectOptions(raw: RawInitOptions, kubeloopVersion: string): ProjectOptions {
  const name = raw.name ?? basename(raw.dir);
  if (!DNS_LABEL.test(name) || name.length > 50) {
    throw new Error(`--name "${name}": want a DNS label of at most 50 characters (lower-case letters, digits, '-'); it names the Loop, the image and the chart entry`);
  }
  if (raw.admission !== undefined && raw.admission !== 'validating' && raw.admission !== 'mutating') {
    throw new Error(`--admission "${raw.admission}": want validating or mutating`);
  }
  const language = raw.language === undefined || raw.language === 'typescript' ? undefined : raw.language;
  if (language !== undefined && !(OTHER_LANGUAGES as readonly string[]).includes(language)) {
    throw new Error(`--language "${raw.language}": want typescript (the default), python or go`);
  }
  if (raw.admission && (raw.owns ?? []).length > 0) throw new Error('--owns is for reconcile functions; an admission function owns nothing (drop --owns or --admission)');
  if (raw.crd !== undefined) {
    if (raw.admission) throw new Error('--crd defines the kind a reconcile function watches; drop --admission or --crd');
    const ref = parseKindRef(raw.crd, '--crd');
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';
    if (!group.includes('.')) throw new Error(`--crd "${raw.crd}": a custom resource's group is a domain with a dot, e.g. example.com/v1alpha1/${ref.kind}`);
    if (raw.for !== undefined && raw.for !== raw.crd) throw new Error(`--crd ${raw.crd} is the kind the function watches: drop --for ${raw.for}`);
  }
  const owns = (raw.owns ?? []).flatMap((entry) => entry.split(',')).filter((entry) => entry.trim() !== '').map((entry) => parseKindRef(entry.trim(), '--owns'));
  const keys = owns.map((ref) => childrenKey(ref.apiVersion, ref.kind));
  const repeated = keys.find((key, index) => keys.indexOf(key) !== index);
  if (repeated) throw new Error(`--owns names ${repeated} twice`);
  if (raw.admission && (raw.related ?? []).length > 0) throw new Error('--related is for reconcile functions (drop --related or --admission)');
  const related = (raw.related ?? [])
    .flatMap((entry) => entry.split(','))
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const ref = parseKindRef(entry.trim(), '--related');
      const entryName = ref.kind.toLowerCase();
      return { name: entryName, ref, annotation: `${name}.example.com/${entryName}` };
    });
  const relatedNames = related.map((r) => r.name);
  const twice = relatedNames.find((n, i) => relatedNames.indexOf(n) !== i);
  if (twice) throw new Error(`--related names the kind ${twice} twice`);
  return {
    name,
    related,
    // An admission function admits pods unless told otherwise: the usual first webhook.
    for: parseKindRef(raw.crd ?? raw.for ?? (raw.admission ? 'v1/Pod' : 'v1/ConfigMap'), raw.crd ? '--crd' : '--for'),
    owns,
    kubeloopSpec: raw.kubeloopSpec ?? `^${kubeloopVersion}`,
    ...(raw.admission ? { admission: raw.admission } : {}),
    ...(language ? { language: language as OtherLanguage } : {}),
    ...(raw.crd ? { crd: true } : {}),
    ...(raw.cluster ? { cluster: true } : {}),
  };
}
