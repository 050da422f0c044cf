import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FAIL_ANNOTATION, kwokStagesYaml } from './kwok-stages.ts';

interface Stage {
  kind: string;
  metadata: { name: string };
  spec: { resourceRef: { kind: string }; selector: { matchExpressions: { key: string; operator: string; values?: string[] }[] } };
}

const stages = parseAllDocuments(kwokStagesYaml()).map((d) => d.toJS() as Stage);
const byName = (name: string): Stage => {
  const stage = stages.find((s) => s.metadata.name === name);
  if (!stage) throw new Error(`no stage ${name}`);
  return stage;
};

describe('kwok stages', () => {
  it('is valid multi-document YAML of Stage objects for nodes and pods', () => {
    expect(stages.every((s) => s.kind === 'Stage')).toBe(true);
    expect(stages.map((s) => s.metadata.name)).toEqual(['node-initialize', 'node-heartbeat-with-lease', 'pod-ready', 'pod-complete', 'pod-fail', 'pod-delete']);
  });

  it('completes pods whose restartPolicy is Never or OnFailure, whoever owns them, unless marked to fail', () => {
    const exprs = byName('pod-complete').spec.selector.matchExpressions;
    expect(exprs).toContainEqual({ key: '.spec.restartPolicy', operator: 'In', values: ['Never', 'OnFailure'] });
    expect(exprs).toContainEqual({ key: `.metadata.annotations["${FAIL_ANNOTATION}"]`, operator: 'DoesNotExist' });
    expect(exprs.some((e) => e.key.includes('ownerReferences'))).toBe(false);
  });

  it('fails running pods annotated with the fail annotation set to "true"', () => {
    expect(byName('pod-fail').spec.selector.matchExpressions).toContainEqual({
      key: `.metadata.annotations["${FAIL_ANNOTATION}"]`,
      operator: 'In',
      values: ['true'],
    });
  });
});
