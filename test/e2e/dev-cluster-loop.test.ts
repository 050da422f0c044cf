// `kubeloop init --cluster`'s ClusterLoop on `kubeloop dev`: on dev's own control plane the router acts as the
// chart's ServiceAccount, which impersonates only the ClusterLoops the chart renders, so dev refuses the file at
// start with a message naming the way that works; that way (dev --kubeconfig on a control plane where the router
// acts as the admin, as `kubeloop cluster up` gives) runs the ClusterLoop as written and reconciles its kind.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as init } from '../../cli/commands/init.ts';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { KubeClient, loadKubeConfig } from '../../lib/kube/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { captureCommand } from '../http/capture-console.ts';
import { startDev, stopDev, type DevProcess } from './dev-process.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';

// A group of this run's own: the ClusterLoop watches only its kind.
const GROUP = `e2e-${randomBytes(3).toString('hex')}.example.com`;
const NAME = 'widget-labeller';
let workDir = '';
let plane: ControlPlane | undefined;
let dev: DevProcess | undefined;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'kubeloop-dev-cluster-loop-'));
  const { code, output } = await captureCommand(init, [join(workDir, NAME), '--crd', `${GROUP}/v1alpha1/Widget`, '--cluster']);
  if (code !== 0) throw new Error(`kubeloop init failed: ${output}`);
  // The scaffold imports the package; here it is this checkout (as `npm install` would link it).
  const module = join(workDir, NAME, 'src', 'index.ts');
  await writeFile(module, (await readFile(module, 'utf8')).replace("from 'kubeloop'", `from ${JSON.stringify(join(REPO_ROOT, 'lib', 'sdk', 'index.ts'))}`));
}, 60_000);

afterAll(async () => {
  await stopDev(dev);
  await plane?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const devArgs = (...extra: string[]) => ['--no-seeds', '--no-webhook', '--function', `${NAME}/src/index.ts`, '--loop', `${NAME}/loop.yaml`, '--dir', join(workDir, 'state'), ...extra];

describe('a ClusterLoop from kubeloop init --cluster on kubeloop dev', () => {
  it("is refused on dev's own control plane, saying why and how to run it", async () => {
    // It starts its control plane first (the file is read with the rest of the project), then refuses and stops it.
    const child = spawn(process.execPath, [join(REPO_ROOT, 'cli', 'bin.js'), 'dev', ...devArgs()], { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, output).toBeGreaterThan(0);
    expect(output).toContain(`--loop ${join(workDir, NAME, 'loop.yaml')}: ClusterLoop ${NAME} cannot run on kubeloop dev's own control plane`);
    expect(output).toContain('`kubeloop cluster up --detach`, then `kubeloop dev --kubeconfig <the kubeconfig it prints>');
    expect(output).toContain('stopped cleanly');
  }, 300_000);

  it('runs as written with dev --kubeconfig on a control plane where the router acts as the admin, and labels a Widget', async () => {
    plane = await startControlPlane();
    dev = await startDev(devArgs('--kubeconfig', plane.kubeconfigPath), { cwd: workDir, env: { ...process.env, KUBELOOP_FROM_SOURCE: '1' }, onOutput: () => {} });
    const client = await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig: plane.kubeconfigPath }));
    try {
      await eventually(`ClusterLoop ${NAME} Ready=True`, async () => {
        const loop = await client.request<{ status?: { conditions?: Array<{ type: string; status: string }> } }>({ path: `/apis/kubeloop.dev/v1alpha1/clusterloops/${NAME}` });
        return loop.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      }, 120_000);
      await client.request({ method: 'POST', path: `/apis/${GROUP}/v1alpha1/namespaces/default/widgets`, body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'Widget', metadata: { name: 'example' }, spec: { replicas: 1, message: 'hello' } } });
      await eventually('Widget example labelled by the ClusterLoop', async () => {
        const widget = await client.request<{ metadata: { labels?: Record<string, string> } }>({ path: `/apis/${GROUP}/v1alpha1/namespaces/default/widgets/example` });
        return widget.metadata.labels?.[`${NAME}.example.com/reconciled`] === 'true';
      }, 120_000);
    } finally {
      await client.close();
    }
  }, 300_000);
});
