import { describe, expect, it } from 'vitest';
import { localLoop } from '../dev/project-function.ts';
import { readDevOptions } from './dev.ts';

const out = { write: () => true };

describe('kubeloop dev options', () => {
  it('starts its own control plane with the webhook and samples by default', () => {
    const options = readDevOptions([], out);
    expect(options).toMatchObject({ namespace: 'kubeloop-system', webhook: true, samples: true, statusIntervalMs: 2000 });
    expect(options.kubeconfig).toBeUndefined();
  });

  it('runs against an existing cluster with --kubeconfig, resolved to an absolute path', () => {
    expect(readDevOptions(['--kubeconfig', 'kube.yaml', '--no-webhook', '--no-samples'], out)).toMatchObject({
      kubeconfig: expect.stringMatching(/^\/.*\/kube\.yaml$/),
      webhook: false,
      samples: false,
    });
  });

  it('takes a user function and its Loop, with or without the seeds', () => {
    const options = readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml', '--no-seeds'], out);
    expect(options).toMatchObject({ seeds: false, projects: [{ source: { module: expect.stringMatching(/^\/.*\/functions\/podset\/index\.ts$/) }, loop: expect.stringMatching(/^\/.*samples\/loops\/podset\.yaml$/) }] });
    expect(readDevOptions([], out).seeds).toBe(true);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts'], out)).toThrow(/--function functions\/podset\/index.ts goes with --loop and\/or --hook/);
    // Only the platform: no seeds, no function of the user's.
    expect(readDevOptions(['--no-seeds'], out)).toMatchObject({ seeds: false });
    expect(readDevOptions(['--no-seeds'], out).projects).toBeUndefined();
    expect(() => readDevOptions(['--function', 'nowhere.ts', '--loop', 'samples/loops/podset.yaml'], out)).toThrow(/nowhere\.ts: no such file/);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'no-loop.yaml'], out)).toThrow(/--loop: no-loop\.yaml: no such file/);
  });

  it("takes a new version to run as the Loop's shadow, only beside the user's function", () => {
    const options = readDevOptions(['--function', 'functions/pod-name-label/index.ts', '--loop', 'samples/loops/podset.yaml', '--shadow', 'functions/podset/index.ts'], out);
    expect(options.projects?.[0]).toMatchObject({ source: { module: expect.stringMatching(/pod-name-label\/index\.ts$/) }, shadow: expect.stringMatching(/^\/.*\/functions\/podset\/index\.ts$/) });
    expect(() => readDevOptions(['--shadow', 'functions/podset/index.ts'], out)).toThrow(/--shadow functions\/podset\/index.ts: give the function first/);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml', '--shadow', 'nowhere.ts'], out)).toThrow(/nowhere\.ts: no such file/);
  });

  it('puts a namespaced Loop into --loop-namespace (default "default") and refuses one without --loop', () => {
    const loop = ['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml'];
    expect(readDevOptions(loop, out).projects?.[0]?.namespace).toBe('default');
    expect(readDevOptions([...loop, '--loop-namespace', 'team-a'], out).projects?.[0]?.namespace).toBe('team-a');
    expect(() => readDevOptions([...loop, '--loop-namespace', 'Team_A'], out)).toThrow(/--loop-namespace: "Team_A" is not a valid namespace name/);
    expect(() => readDevOptions(['--loop-namespace', 'team-a'], out)).toThrow(/--loop-namespace is where --loop's Loop and --hook's hook go/);
  });

  it('runs a function by command, for a hook as well as a Loop, as the namespace admin with --tenant', () => {
    const options = readDevOptions(['--function-command', 'python3 function.py', '--hook', 'samples/admission-hooks/watcher-sidecar.yaml', '--tenant', 'team-a'], out);
    // The command runs in its file's folder, where init writes function.py and go.mod.
    expect(options).toMatchObject({ tenant: 'team-a', projects: [{ source: { command: 'python3 function.py', cwd: expect.stringMatching(/\/samples\/admission-hooks$/) }, namespace: 'team-a', hook: expect.stringMatching(/watcher-sidecar\.yaml$/) }] });
    expect(options.projects?.[0]?.loop).toBeUndefined();
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts', '--function-command', 'go run .', '--loop', 'samples/loops/podset.yaml'], out)).toThrow(/--function .*podset\/index\.ts goes with --loop and\/or --hook/);
    expect(() => readDevOptions(['--loop', 'samples/loops/podset.yaml'], out)).toThrow(/give the function first/);
    expect(() => readDevOptions(['--tenant', 'team-a', '--loop-namespace', 'team-b'], out)).toThrow(/not both/);
    expect(() => readDevOptions(['--tenant', 'team-a', '--kubeconfig', 'k.yaml'], out)).toThrow(/--tenant needs dev's own control plane/);
    expect(() => readDevOptions(['--tenant', 'Team_A'], out)).toThrow(/--tenant: "Team_A" is not a valid namespace name/);
  });

  it("points a Loop's function at the local process, from a url or a Service ref, keeping the path", () => {
    const loop = (fn: { url?: string; ref?: { name: string; port: number; path: string } }) => ({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', metadata: { name: 'web' }, spec: { function: { timeoutSeconds: 5, ...fn } } });
    expect(localLoop(loop({ ref: { name: 'web', port: 8080, path: '/reconcile' } }), 'http://127.0.0.1:4000').spec.function).toEqual({ timeoutSeconds: 5, url: 'http://127.0.0.1:4000/reconcile' });
    expect(localLoop(loop({ url: 'http://web.kubeloop-system.svc:8080/' }), 'http://127.0.0.1:4000').spec.function).toEqual({ timeoutSeconds: 5, url: 'http://127.0.0.1:4000/' });
  });

  it('takes several projects, each function with the files after it', () => {
    const options = readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml', '--function-command', 'go run .', '--hook', 'samples/admission-hooks/watcher-sidecar.yaml'], out);
    expect(options.projects?.map((p) => [p.source, p.loop, p.hook])).toEqual([
      [{ module: expect.stringMatching(/podset\/index\.ts$/) }, expect.stringMatching(/podset\.yaml$/), undefined],
      [{ command: 'go run .', cwd: expect.stringMatching(/admission-hooks$/) }, undefined, expect.stringMatching(/watcher-sidecar\.yaml$/)],
    ]);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml', '--loop', 'samples/loops/at.yaml'], out)).toThrow(/--loop: one per function/);
  });

  it('names the bad setting', () => {
    expect(() => readDevOptions(['--status-interval-seconds', 'soon'], out)).toThrow(/--status-interval-seconds: "soon"/);
    expect(() => readDevOptions(['--namespace', 'Kube_Loop'], out)).toThrow(/--namespace: "Kube_Loop" is not a valid namespace name/);
    expect(() => readDevOptions(['extra'], out)).toThrow(/unexpected arguments: extra/);
    expect(() => readDevOptions(['--bogus'], out)).toThrow(/bogus/);
  });
});

describe('the user Loop in kubeloop dev', () => {
  const loop = { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterLoop', metadata: { name: 'mine' }, spec: { function: { url: 'http://mine.ns.svc:8080/reconcile' } } };
  it('points the function, and the shadow when there is one, at the local processes on the same path', () => {
    expect(localLoop(loop, 'http://127.0.0.1:4000').spec.function).toEqual({ url: 'http://127.0.0.1:4000/reconcile' });
    expect(localLoop(loop, 'http://127.0.0.1:4000', 'http://127.0.0.1:4001').spec.function).toEqual({ url: 'http://127.0.0.1:4000/reconcile', shadow: { url: 'http://127.0.0.1:4001/reconcile' } });
  });
});
