import { describe, expect, it } from 'vitest';
import { POD_NAME_LABEL_DEFAULTS, readPodNameLabelConfig } from './config.ts';

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
});
