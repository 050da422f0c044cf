import { describe, expect, it } from 'vitest';
import { localLoop } from '../dev/run-dev.ts';
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
    expect(options).toMatchObject({ seeds: false, userFunction: { module: expect.stringMatching(/^\/.*\/functions\/podset\/index\.ts$/), loop: expect.stringMatching(/^\/.*samples\/loops\/podset\.yaml$/) } });
    expect(readDevOptions([], out).seeds).toBe(true);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts'], out)).toThrow(/--function and --loop go together/);
    expect(() => readDevOptions(['--no-seeds'], out)).toThrow(/--no-seeds needs --function and --loop/);
    expect(() => readDevOptions(['--function', 'nowhere.ts', '--loop', 'samples/loops/podset.yaml'], out)).toThrow(/nowhere\.ts: no such file/);
    expect(() => readDevOptions(['--function', 'functions/podset/index.ts', '--loop', 'no-loop.yaml'], out)).toThrow(/--loop: no-loop\.yaml: no such file/);
  });

  it('puts a namespaced Loop into --loop-namespace (default "default") and refuses one without --loop', () => {
    const loop = ['--function', 'functions/podset/index.ts', '--loop', 'samples/loops/podset.yaml'];
    expect(readDevOptions(loop, out).userFunction?.loopNamespace).toBe('default');
    expect(readDevOptions([...loop, '--loop-namespace', 'team-a'], out).userFunction?.loopNamespace).toBe('team-a');
    expect(() => readDevOptions([...loop, '--loop-namespace', 'Team_A'], out)).toThrow(/--loop-namespace: "Team_A" is not a valid namespace name/);
    expect(() => readDevOptions(['--loop-namespace', 'team-a'], out)).toThrow(/--loop-namespace is where --loop's Loop goes/);
  });

  it("points a Loop's function at the local process, from a url or a Service ref, keeping the path", () => {
    const loop = (fn: { url?: string; ref?: { name: string; port: number; path: string } }) => ({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', metadata: { name: 'web' }, spec: { function: { timeoutSeconds: 5, ...fn } } });
    expect(localLoop(loop({ ref: { name: 'web', port: 8080, path: '/reconcile' } }), 'http://127.0.0.1:4000').spec.function).toEqual({ timeoutSeconds: 5, url: 'http://127.0.0.1:4000/reconcile' });
    expect(localLoop(loop({ url: 'http://web.kubeloop-system.svc:8080/' }), 'http://127.0.0.1:4000').spec.function).toEqual({ timeoutSeconds: 5, url: 'http://127.0.0.1:4000/' });
  });

  it('names the bad setting', () => {
    expect(() => readDevOptions(['--status-interval-seconds', 'soon'], out)).toThrow(/--status-interval-seconds: "soon"/);
    expect(() => readDevOptions(['--namespace', 'Kube_Loop'], out)).toThrow(/--namespace: "Kube_Loop" is not a valid namespace name/);
    expect(() => readDevOptions(['extra'], out)).toThrow(/unexpected arguments: extra/);
    expect(() => readDevOptions(['--bogus'], out)).toThrow(/bogus/);
  });
});
