import { describe, expect, it } from 'vitest';
import { tryCommandList } from './try-commands.ts';

describe('the kubectl commands kubeloop dev suggests', () => {
  const samples = [{ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'podset-sample' } }];

  it('names the sample PodSet and schedules the At 30 s ahead, in whole seconds of UTC', () => {
    const [annotate, scale, at] = tryCommandList(samples, new Date('2026-11-22T10:00:00.400Z'));
    expect(annotate?.command).toContain('kubectl annotate pods -l app=podset-sample kubeloop.dev/add-pod-name-label=true');
    expect(scale?.command).toContain(`kubectl patch podset podset-sample --type=merge -p '{"spec":{"replicas":5}}'`);
    expect(at?.command).toContain('"schedule":"2026-11-22T10:00:31Z"');
  });

  it('asks kubeloop history why the PodSet looks as it does, only when dev registered the history API', () => {
    expect(tryCommandList(samples, new Date())).toHaveLength(3);
    const history = tryCommandList(samples, new Date(), true)[3];
    expect(history?.command).toBe('npx kubeloop history --cluster-loop podset -n default podset-sample');
  });

  it('quotes the At for the shell so its JSON reaches kubectl intact', () => {
    const [, , at] = tryCommandList(samples, new Date('2026-11-22T10:00:00Z'));
    const quoted = /^echo '(.*)' \| kubectl apply -f -/.exec(at?.command ?? '');
    expect(JSON.parse(quoted?.[1] ?? 'null')).toMatchObject({ kind: 'At', spec: { command: 'echo hello from kubeloop' } });
  });
});
