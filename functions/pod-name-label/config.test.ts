import { describe, expect, it } from 'vitest';
import { POD_NAME_LABEL_DEFAULTS, qualifiedNameProblem, readPodNameLabelConfig } from './config.ts';

describe('pod-name-label config', () => {
  it('defaults to the kubeloop.dev keys', () => {
    expect(readPodNameLabelConfig({})).toEqual(POD_NAME_LABEL_DEFAULTS);
    expect(readPodNameLabelConfig({ KUBELOOP_POD_NAME_LABEL: '  ' })).toEqual(POD_NAME_LABEL_DEFAULTS);
  });

  it('reads both keys from the environment', () => {
    expect(
      readPodNameLabelConfig({ KUBELOOP_POD_NAME_ANNOTATION: 'padok.fr/add-pod-name-label', KUBELOOP_POD_NAME_LABEL: 'pod-name' }),
    ).toEqual({ annotation: 'padok.fr/add-pod-name-label', label: 'pod-name' });
  });

  it('fails start-up naming the variable when a key is not a valid label key', () => {
    expect(() => readPodNameLabelConfig({ KUBELOOP_POD_NAME_LABEL: 'Padok.fr/pod-name' })).toThrow(
      /KUBELOOP_POD_NAME_LABEL="Padok.fr\/pod-name" is not a valid Kubernetes label\/annotation key: prefix/,
    );
    expect(() => readPodNameLabelConfig({ KUBELOOP_POD_NAME_ANNOTATION: 'a/b/c' })).toThrow(/KUBELOOP_POD_NAME_ANNOTATION.*more than one/);
  });

  it.each([
    ['kubeloop.dev/pod-name', undefined],
    ['pod-name', undefined],
    ['example.com/-bad', /name part/],
    [`example.com/${'n'.repeat(64)}`, /1 to 63/],
    ['/name', /prefix/],
    ['example.com/', /1 to 63/],
  ])('checks %s as a qualified name', (key, problem) => {
    const found = qualifiedNameProblem(key);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});
