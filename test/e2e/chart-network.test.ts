// charts/kubeloop's network trust, rendered with the real helm: who may call the webhook gateway (the API
// server's client certificate by default, or only its addresses), the ops port that carries probes and
// metrics, and egress (functions none, the router and the webhook DNS, the API server and pods, widened by value).
import { describe, expect, inject, it } from 'vitest';
import { helm, one, renderChart, valuesFile, CHART_DIR, KUBE_VERSION, type Manifest } from './chart-render.ts';

const helmBinary = inject('clusterBinaries').helm;
const NS = 'kubeloop-system';

interface Policy {
  spec: { policyTypes: string[]; ingress?: Array<Record<string, unknown>>; egress?: Array<Record<string, unknown>> };
}
interface Container {
  args: string[];
  ports: Array<{ name: string; containerPort: number }>;
  livenessProbe: { httpGet: Record<string, unknown> };
  readinessProbe: { httpGet: Record<string, unknown> };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}

const policy = (manifests: Manifest[], name: string): Policy['spec'] => (one(manifests, 'NetworkPolicy', name) as unknown as Policy).spec;
const webhookContainer = (manifests: Manifest[]): Container =>
  (one(manifests, 'Deployment', 'kubeloop-webhook') as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers[0]!;

const CONTROL_PLANE_EGRESS = [
  { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
  { ports: [{ port: 443, protocol: 'TCP' }, { port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.0.0/16'] } }] },
  { to: [{ namespaceSelector: {} }] },
];

describe('egress NetworkPolicies', () => {
  it('deny function pods every connection, and let the router and the webhook reach only DNS, the API server (never link-local) and pods', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS });
    const functions = policy(manifests, 'kubeloop-functions');
    expect(functions.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(functions.egress).toEqual([]);
    for (const name of ['kubeloop-router', 'kubeloop-webhook']) {
      expect(policy(manifests, name).policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy(manifests, name).egress).toEqual(CONTROL_PLANE_EGRESS);
    }
  });

  it('narrow to the API server\'s addresses and ports, and widen by value for functions and for the router and the webhook', async () => {
    const external = { to: [{ ipBlock: { cidr: '203.0.113.0/24' } }], ports: [{ port: 443, protocol: 'TCP' }] };
    const dns = { ports: [{ port: 53, protocol: 'UDP' }] };
    const { manifests } = await renderChart(helmBinary, {
      namespace: NS,
      values: { networkPolicy: { apiServerCIDRs: ['10.20.0.10/32'], egress: { apiServerPorts: [6443], extraRules: [external], functionRules: [dns] } } },
    });
    expect(policy(manifests, 'kubeloop-functions').egress).toEqual([dns]);
    for (const name of ['kubeloop-router', 'kubeloop-webhook']) {
      expect(policy(manifests, name).egress).toEqual([CONTROL_PLANE_EGRESS[0], { ports: [{ port: 6443, protocol: 'TCP' }], to: [{ ipBlock: { cidr: '10.20.0.10/32' } }] }, CONTROL_PLANE_EGRESS[2], external]);
    }
    // The same addresses are the only ones let in on the admission port.
    expect(policy(manifests, 'kubeloop-webhook').ingress?.[0]).toEqual({ ports: [{ port: 8443, protocol: 'TCP' }], from: [{ ipBlock: { cidr: '10.20.0.10/32' } }] });
  });

  it('leave egress open when networkPolicy.egress.enabled is false', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { networkPolicy: { egress: { enabled: false } } } });
    for (const name of ['kubeloop-functions', 'kubeloop-router', 'kubeloop-webhook']) {
      expect(policy(manifests, name).policyTypes).toEqual(['Ingress']);
      expect(policy(manifests, name).egress).toBeUndefined();
    }
  });
});

describe('who may call the webhook gateway', () => {
  it('requires the API server\'s client certificate by default: the cluster CA from the pod\'s service-account volume, by name', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS });
    const container = webhookContainer(manifests);
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--port=8443',
        '--ops-port=8082',
        '--client-ca-file=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
        '--client-name=kube-apiserver-webhook-client',
        '--client-name=kube-apiserver-kubelet-client',
      ]),
    );
    // The kubelet cannot present the API server's certificate: it probes the plain HTTP ops port.
    expect(container.ports.map((p) => [p.name, p.containerPort])).toEqual([['https', 8443], ['http-ops', 8082]]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http-ops' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http-ops' });
  });

  it('trusts a CA given by value, mounted from a ConfigMap', async () => {
    const clientCA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { webhook: { apiServerAuthentication: { clientCA, clientNames: ['front-proxy'] } } } });
    const container = webhookContainer(manifests);
    expect(container.args).toEqual(expect.arrayContaining(['--client-ca-file=/etc/kubeloop/client-ca/ca.crt', '--client-name=front-proxy']));
    expect(container.args).not.toContain('--client-name=kube-apiserver-webhook-client');
    expect(container.volumeMounts).toContainEqual({ name: 'client-ca', mountPath: '/etc/kubeloop/client-ca', readOnly: true });
    expect((one(manifests, 'ConfigMap', 'kubeloop-webhook-client-ca') as unknown as { data: Record<string, string> }).data).toEqual({ 'ca.crt': clientCA });
  });

  it('refuses mode none unless the NetworkPolicy names the API server\'s addresses, and then passes no certificate flags', async () => {
    for (const networkPolicy of [{}, { enabled: false, apiServerCIDRs: ['10.20.0.10/32'] }]) {
      const values = await valuesFile({ webhook: { apiServerAuthentication: { mode: 'none' } }, networkPolicy });
      try {
        const result = await helm(helmBinary, ['template', 'kubeloop', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION, ...values.args]);
        expect(result.code).not.toBe(0);
        expect(result.stderr).toContain('webhook.apiServerAuthentication.mode=none');
        expect(result.stderr).toContain('networkPolicy.apiServerCIDRs');
      } finally {
        await values.cleanup();
      }
    }
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { webhook: { apiServerAuthentication: { mode: 'none' } }, networkPolicy: { apiServerCIDRs: ['10.20.0.10/32'] } } });
    expect(webhookContainer(manifests).args.filter((a) => a.startsWith('--client-'))).toEqual([]);
    expect(policy(manifests, 'kubeloop-webhook').ingress?.[0]).toMatchObject({ from: [{ ipBlock: { cidr: '10.20.0.10/32' } }] });
  });
});
