// Knative Serving's real admission webhook on a private local control plane, for test/e2e/chart-knative.test.ts:
// its CRDs, the knative-serving namespace, the config-* ConfigMaps with their defaults, the webhook-certs
// Secret and its three webhook configurations from the module's config/, then the webhook process itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments, stringify } from 'yaml';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { freePort } from '../../cli/cluster/free-port.ts';
import { ensureKnativeWebhook, KNATIVE_WEBHOOK_VERSION } from '../../cli/cluster/knative-webhook.ts';
import { moduleDir } from './go-module-crds.ts';
import { waitEstablished } from '../cluster/crds-established.ts';

export const KNATIVE_NAMESPACE = 'knative-serving';

export interface KnativeServing {
  plane: ControlPlane;
  /** kubectl against the private control plane; rejects with kubectl's stderr. */
  kubectl(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

type Doc = { kind?: string; metadata?: { name?: string }; webhooks?: Array<{ clientConfig: { service?: { port?: number } } }> };

async function yamlDocs(dir: string): Promise<Doc[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const docs = await Promise.all(files.map(async (f) => parseAllDocuments(await readFile(join(dir, f), 'utf8')).map((d) => d.toJS() as Doc | null)));
  return docs.flat().filter((d): d is Doc => d !== null && typeof d === 'object' && !!d.kind);
}

function run(binary: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(err || `exit ${code}`))));
    child.stdin.end(input ?? '');
  });
}

/** Starts a control plane and Knative's webhook on it; resolves once the webhook has injected its caBundle. */
export async function startKnativeServing(onProgress: (line: string) => void): Promise<KnativeServing> {
  const binary = await ensureKnativeWebhook(onProgress);
  const plane = await startControlPlane({ nodes: 1, onProgress });
  const workDir = await mkdtemp(join(tmpdir(), 'kubeloop-knative-'));
  let webhook: ChildProcess | undefined;
  const kubectl = (args: string[], input?: string) => run(plane.binaries.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], input);
  const stop = async () => {
    if (webhook && webhook.exitCode === null) {
      const exited = new Promise((done) => webhook?.once('exit', done));
      webhook.kill('SIGTERM');
      await exited;
    }
    await plane.stop();
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    const serving = await moduleDir('knative.dev/serving', KNATIVE_WEBHOOK_VERSION);
    const networkingVersion = /knative\.dev\/networking (\S+)/.exec(await readFile(join(serving, 'go.mod'), 'utf8'))?.[1];
    if (!networkingVersion) throw new Error('knative.dev/serving go.mod names no knative.dev/networking');
    const networking = await moduleDir('knative.dev/networking', networkingVersion);
    const port = await freePort();
    const core = join(serving, 'config', 'core');
    // CRDs first (Serving's and the networking ones its webhook also admits), then what lives in them.
    const crds = [...(await yamlDocs(join(core, '300-resources'))), ...(await yamlDocs(join(networking, 'config'))).filter((d) => d.kind === 'CustomResourceDefinition')];
    const configMaps = [...(await yamlDocs(join(core, 'configmaps'))), ...(await yamlDocs(join(networking, 'config'))).filter((d) => d.kind === 'ConfigMap')];
    const webhookDocs = await yamlDocs(join(core, 'webhooks'));
    // The API server reaches the webhook Service by name; an ExternalName Service "localhost" sends it to
    // the local process (on the port each configuration names) while Knative keeps managing its caBundle.
    for (const doc of webhookDocs) for (const w of doc.webhooks ?? []) if (w.clientConfig.service) w.clientConfig.service.port = port;
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'webhook', namespace: KNATIVE_NAMESPACE }, spec: { type: 'ExternalName', externalName: 'localhost' } };
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KNATIVE_NAMESPACE } };
    const apply = (docs: unknown[]) => kubectl(['apply', '--server-side', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
    await apply(crds);
    await waitEstablished(plane.kubeConfig(), crds.map((c) => c.metadata?.name ?? ''));
    await apply([namespace]);
    await apply([...configMaps, service, ...webhookDocs]);
    const logPath = join(workDir, 'webhook.log');
    const log = createWriteStream(logPath);
    webhook = spawn(binary, ['--kubeconfig', plane.kubeconfigPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        SYSTEM_NAMESPACE: KNATIVE_NAMESPACE,
        POD_NAME: 'webhook-kubeloop-e2e',
        WEBHOOK_NAME: 'webhook',
        WEBHOOK_PORT: String(port),
        METRICS_DOMAIN: 'knative.dev/internal/serving',
        CONFIG_LOGGING_NAME: 'config-logging',
        CONFIG_OBSERVABILITY_NAME: 'config-observability',
        METRICS_PROMETHEUS_HOST: '127.0.0.1',
        METRICS_PROMETHEUS_PORT: String(await freePort()),
        PROFILING_PORT: String(await freePort()),
      },
    });
    webhook.stdout?.pipe(log);
    webhook.stderr?.pipe(log);
    await writeFile(join(workDir, 'port'), String(port));
    // Ready when Knative has written its CA into both resource webhooks and answers a dry-run create.
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (webhook.exitCode !== null) throw new Error(`Knative's webhook exited (${webhook.exitCode}):\n${(await readFile(logPath, 'utf8')).slice(-3000)}`);
      const bundles = await kubectl(['get', 'mutatingwebhookconfiguration/webhook.serving.knative.dev', 'validatingwebhookconfiguration/validation.webhook.serving.knative.dev', '-o', 'jsonpath={range .items[*]}{.webhooks[0].clientConfig.caBundle}{"\\n"}{end}']).catch(() => '');
      if (bundles.split('\n').filter((b) => b.length > 0).length === 2) break;
      if (Date.now() > deadline) throw new Error(`Knative's webhook did not inject its caBundle within 120 s:\n${(await readFile(logPath, 'utf8')).slice(-3000)}`);
      await sleep(500);
    }
    return { plane, kubectl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
