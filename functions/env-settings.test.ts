import { describe, expect, it } from 'vitest';
import { qualifiedNameProblem, readImageReference } from './env-settings.ts';

describe('qualifiedNameProblem', () => {
  it.each([
    ['kubeloop.dev/pod-name', undefined],
    ['pod-name', undefined],
    ['example.com/-bad', /name part/],
    [`example.com/${'n'.repeat(64)}`, /1 to 63/],
    ['/name', /prefix/],
    ['example.com/', /1 to 63/],
  ])('checks %s as a label key', (key, problem) => {
    const found = qualifiedNameProblem(key);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});

describe('readImageReference', () => {
  it.each(['busybox', 'busybox:1.36', 'registry.local:5000/tools/busybox:1.36', `busybox@sha256:${'a'.repeat(64)}`])(
    'accepts %s',
    (image) => {
      expect(readImageReference({ IMG: image }, 'IMG', 'fallback')).toBe(image);
    },
  );

  it('falls back when the variable is unset or blank', () => {
    expect(readImageReference({}, 'IMG', 'busybox:1.36')).toBe('busybox:1.36');
    expect(readImageReference({ IMG: ' ' }, 'IMG', 'busybox:1.36')).toBe('busybox:1.36');
  });

  it.each(['Busybox', 'busy box', 'busybox:', ':1.36'])('rejects %j naming the variable', (image) => {
    expect(() => readImageReference({ KUBELOOP_PODSET_IMAGE: image }, 'KUBELOOP_PODSET_IMAGE', 'x')).toThrow(
      /^KUBELOOP_PODSET_IMAGE=".*" is not a container image reference/,
    );
  });
});
