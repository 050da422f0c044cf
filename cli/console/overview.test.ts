import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../dev/prometheus-text.ts';
import { overviewRows } from './overview.ts';

const condition = (type: string, status: 'True' | 'False', reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: '2026-11-28T10:00:00Z' });

const METRICS = parsePrometheusText(`
workqueue_depth{name="team-a/web",controller="team-a/web"} 4
controller_runtime_active_workers{controller="team-a/web"} 2
kubeloop_router_reconcile_duration_seconds_count{loop="team-a/web",result="ok"} 10
kubeloop_router_reconcile_duration_seconds_count{loop="team-a/web",result="error"} 3
kubeloop_router_reconcile_duration_seconds_count{loop="podset",result="ok"} 7
`);

describe('overviewRows', () => {
  it("joins each Loop with the router's figures by its identity, and reads Ready, Throttled, shadow and canary from status", () => {
    const rows = overviewRows(
      [
        {
          kind: 'Loop',
          items: [
            {
              metadata: { name: 'web', namespace: 'team-a' },
              spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { app: 'web' } }, namespaces: ['team-a'], function: { url: 'http://f/', shadow: { url: 'http://g/' }, canary: { url: 'http://h/', weight: 10, errorBudget: { windowSeconds: 60 } } } },
              status: { conditions: [condition('Ready', 'False', 'FunctionUnreachable', 'connect ECONNREFUSED'), condition('Throttled', 'True', 'TenantShare'), condition('ShadowDiverged', 'True', 'Diverged'), condition('CanaryRolledBack', 'True', 'ErrorBudgetSpent')] },
            },
          ],
        },
        { kind: 'ClusterLoop', items: [{ metadata: { name: 'podset' }, status: { conditions: [condition('Ready', 'True', 'Running')] } }] },
        { kind: 'ClusterAdmissionHook', items: [{ metadata: { name: 'sidecar' } }] },
      ],
      METRICS,
    );
    expect(rows.map((r) => r.id)).toEqual(['sidecar', 'podset', 'team-a/web']);
    expect(rows.find((r) => r.id === 'team-a/web')).toMatchObject({
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      scope: { labelSelector: 'app=web', namespaces: ['team-a'] },
      ready: { status: 'False', reason: 'FunctionUnreachable', message: 'connect ECONNREFUSED' },
      throttled: { status: 'True', reason: 'TenantShare' },
      shadow: { configured: true, diverged: { status: 'True' } },
      canary: { weight: 10, rolledBack: { status: 'True', reason: 'ErrorBudgetSpent' } },
      metrics: { queue: 4, inFlight: 2, reconciles: 13, errors: 3 },
    });
    expect(rows.find((r) => r.id === 'podset')?.metrics).toEqual({ queue: 0, inFlight: 0, reconciles: 7, errors: 0 });
    // A hook has no router figures, and no Ready yet here.
    expect(rows.find((r) => r.id === 'sidecar')).toEqual({ kind: 'ClusterAdmissionHook', name: 'sidecar', id: 'sidecar' });
  });

  it('leaves the figures out when the metrics could not be read', () => {
    const [row] = overviewRows([{ kind: 'ClusterLoop', items: [{ metadata: { name: 'podset' } }] }], undefined);
    expect(row?.metrics).toBeUndefined();
  });
});
