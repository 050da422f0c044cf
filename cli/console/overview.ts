// The console's first page: every Loop, ClusterLoop, AdmissionHook and ClusterAdmissionHook the caller may
// list (with the caller's own credentials), each with its conditions (Ready, Throttled, ShadowDiverged,
// CanaryRolledBack), its shadow and canary settings, and, where the router's metrics are readable, its queue,
// calls in flight, reconciles and errors. What the caller may not list is said, not hidden.
import { ADMISSION_HOOK_API_VERSION, ADMISSION_HOOK_KIND, ADMISSION_HOOK_PLURAL, CLUSTER_ADMISSION_HOOK_KIND, CLUSTER_ADMISSION_HOOK_PLURAL } from '../../api/admission-hook.ts';
import { CLUSTER_LOOP_KIND, CLUSTER_LOOP_PLURAL, LOOP_API_VERSION, LOOP_KIND, LOOP_PLURAL, loopIdentity, type LoopSpec } from '../../api/loop.ts';
import type { Condition, KindRef } from '../../api/meta.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { labelSelectorQuery } from '../../lib/kube/label-selector.ts';
import { sumBy, type MetricSample } from '../dev/prometheus-text.ts';

export interface ConditionView {
  status: string;
  reason?: string;
  message?: string;
}

export interface OverviewRow {
  kind: string;
  namespace?: string;
  name: string;
  /** The router's identity of a Loop (`<namespace>/<name>` or `<name>`): history and metrics are keyed by it. */
  id: string;
  /** The Loop's primary kind (Loops only). */
  for?: KindRef;
  /** Which primaries it reconciles besides the kind: its label selector (query syntax) and namespaces. */
  scope?: { labelSelector?: string; namespaces?: string[] };
  /** Ready as the router (or the gateway) wrote it; undefined before either did. */
  ready?: ConditionView;
  throttled?: ConditionView;
  shadow?: { configured: boolean; diverged?: ConditionView };
  canary?: { weight: number; rolledBack?: ConditionView };
  metrics?: { queue: number; inFlight: number; reconciles: number; errors: number };
}

/** A list the caller could not read: the kind, where, and the API server's answer. */
export interface Refusal {
  kind: string;
  namespace?: string;
  code: number;
  message: string;
}

export interface Overview {
  rows: OverviewRow[];
  refused: Refusal[];
  /** Where the router's metrics came from, or why there are none. */
  metrics: { source?: string; unavailable?: string };
}

interface Listed {
  metadata: { name: string; namespace?: string };
  spec?: Partial<LoopSpec>;
  status?: { conditions?: Condition[] };
}

const KINDS = [
  { kind: CLUSTER_LOOP_KIND, plural: CLUSTER_LOOP_PLURAL, apiVersion: LOOP_API_VERSION, namespaced: false },
  { kind: LOOP_KIND, plural: LOOP_PLURAL, apiVersion: LOOP_API_VERSION, namespaced: true },
  { kind: CLUSTER_ADMISSION_HOOK_KIND, plural: CLUSTER_ADMISSION_HOOK_PLURAL, apiVersion: ADMISSION_HOOK_API_VERSION, namespaced: false },
  { kind: ADMISSION_HOOK_KIND, plural: ADMISSION_HOOK_PLURAL, apiVersion: ADMISSION_HOOK_API_VERSION, namespaced: true },
] as const;

const isLoopKind = (kind: string) => kind === LOOP_KIND || kind === CLUSTER_LOOP_KIND;

function conditionView(conditions: Condition[] | undefined, type: string): ConditionView | undefined {
  const c = conditions?.find((x) => x.type === type);
  if (!c) return undefined;
  return { status: c.status, ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) };
}

/** One row per listed object, metrics joined by the Loop's identity (the router's `loop` label). Pure. */
export function overviewRows(listed: Array<{ kind: string; items: Listed[] }>, samples: MetricSample[] | undefined): OverviewRow[] {
  const queue = samples && sumBy(samples, 'workqueue_depth', 'name');
  const inFlight = samples && sumBy(samples, 'controller_runtime_active_workers', 'controller');
  const reconciles = samples && sumBy(samples, 'kubeloop_router_reconcile_duration_seconds_count', 'loop');
  const errors = samples && sumBy(samples, 'kubeloop_router_reconcile_duration_seconds_count', 'loop', (labels) => labels.result === 'error');
  const rows: OverviewRow[] = [];
  for (const { kind, items } of listed) {
    for (const item of items) {
      const { name, namespace } = item.metadata;
      const conditions = item.status?.conditions;
      const row: OverviewRow = { kind, name, id: loopIdentity(namespace, name), ...(namespace ? { namespace } : {}) };
      const ready = conditionView(conditions, 'Ready');
      if (ready) row.ready = ready;
      if (isLoopKind(kind)) {
        if (item.spec?.for) row.for = item.spec.for;
        const labelSelector = labelSelectorQuery(item.spec?.selector);
        const loopNamespaces = item.spec?.namespaces;
        if (labelSelector || loopNamespaces?.length) row.scope = { ...(labelSelector ? { labelSelector } : {}), ...(loopNamespaces?.length ? { namespaces: loopNamespaces } : {}) };
        const throttled = conditionView(conditions, 'Throttled');
        if (throttled) row.throttled = throttled;
        const diverged = conditionView(conditions, 'ShadowDiverged');
        if (item.spec?.function?.shadow || diverged) row.shadow = { configured: item.spec?.function?.shadow !== undefined, ...(diverged ? { diverged } : {}) };
        const canary = item.spec?.function?.canary;
        const rolledBack = conditionView(conditions, 'CanaryRolledBack');
        if (canary || rolledBack) row.canary = { weight: canary?.weight ?? 0, ...(rolledBack ? { rolledBack } : {}) };
        // Only a Loop the router runs has figures; another shows none rather than zeros.
        if (queue && inFlight && reconciles && errors && (queue.has(row.id) || inFlight.has(row.id) || reconciles.has(row.id))) {
          row.metrics = { queue: queue.get(row.id) ?? 0, inFlight: inFlight.get(row.id) ?? 0, reconciles: reconciles.get(row.id) ?? 0, errors: errors.get(row.id) ?? 0 };
        }
      }
      rows.push(row);
    }
  }
  return rows.sort((a, b) => a.kind.localeCompare(b.kind) || (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name));
}

/**
 * Lists every kind as the caller: a namespaced kind across all namespaces, and where that is refused, in
 * each of `namespaces` (a user bound to a role in a few namespaces may list there only).
 */
export async function listConsoleObjects(client: KubeClient, namespaces: readonly string[]): Promise<{ listed: Array<{ kind: string; items: Listed[] }>; refused: Refusal[] }> {
  const listed: Array<{ kind: string; items: Listed[] }> = [];
  const refused: Refusal[] = [];
  const list = async (kind: string, path: string, namespace?: string): Promise<boolean> => {
    try {
      listed.push({ kind, items: (await client.request<{ items: Listed[] }>({ path })).items });
      return true;
    } catch (error) {
      if (!isApiError(error) || ![401, 403, 404].includes(error.statusCode)) throw error;
      refused.push({ kind, ...(namespace ? { namespace } : {}), code: error.statusCode, message: error.message });
      return false;
    }
  };
  await Promise.all(
    KINDS.map(async ({ kind, plural, apiVersion, namespaced }) => {
      const all = `/apis/${apiVersion}/${plural}`;
      if (!namespaced || namespaces.length === 0) return void (await list(kind, all));
      // The cluster-wide list first; only when that is forbidden, each namespace (whose refusals are shown).
      try {
        listed.push({ kind, items: (await client.request<{ items: Listed[] }>({ path: all })).items });
      } catch (error) {
        if (!isApiError(error, 403)) {
          if (!isApiError(error) || ![401, 404].includes(error.statusCode)) throw error;
          refused.push({ kind, code: error.statusCode, message: error.message });
          return;
        }
        for (const namespace of namespaces) await list(kind, `/apis/${apiVersion}/namespaces/${encodeURIComponent(namespace)}/${plural}`, namespace);
      }
    }),
  );
  return { listed, refused };
}
