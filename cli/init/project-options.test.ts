// kubeloop init's options: kinds parsed from <apiVersion>/<Kind>, names and typos refused with the flag named.
import { describe, expect, it } from 'vitest';
import { parseKindRef, readProjectOptions } from './project-options.ts';

describe('parseKindRef', () => {
  it('reads core, grouped and dotted-group kinds', () => {
    expect(parseKindRef('v1/ConfigMap', '--for')).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(parseKindRef('apps/v1/Deployment', '--for')).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment' });
    expect(parseKindRef('widgets.example.com/v1alpha1/Widget', '--owns')).toEqual({ apiVersion: 'widgets.example.com/v1alpha1', kind: 'Widget' });
  });

  it('names the flag and the part that is wrong', () => {
    expect(() => parseKindRef('v1/configmap', '--for')).toThrow(/--for "v1\/configmap": "configmap" is not a Kind/);
    expect(() => parseKindRef('apps/Deployment', '--for')).toThrow(/"apps" is not an API version/);
    expect(() => parseKindRef('ConfigMap', '--owns')).toThrow(/--owns "ConfigMap": "" is not an API version/);
    expect(() => parseKindRef('Apps_X/v1/Deployment', '--for')).toThrow(/"Apps_X" is not an API group/);
  });
});

describe('readProjectOptions', () => {
  it('writes the namespaced kinds unless --cluster asks for the cluster-scoped ones', () => {
    expect(readProjectOptions({ dir: '/work/web' }, '1.2.3')).not.toHaveProperty('cluster');
    expect(readProjectOptions({ dir: '/work/web', cluster: true }, '1.2.3')).toMatchObject({ cluster: true });
  });

  it('defaults the name to the folder, the kind to ConfigMap and the dependency to this version', () => {
    expect(readProjectOptions({ dir: '/work/my-controller' }, '1.2.3')).toEqual({
      name: 'my-controller',
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      owns: [],
      related: [],
      kubeloopSpec: '^1.2.3',
    });
  });

  it('takes owned kinds repeated or comma-separated, and refuses one named twice', () => {
    const options = readProjectOptions({ dir: '/x/a', owns: ['v1/Pod,v1/Service', 'apps/v1/Deployment'] }, '1.0.0');
    expect(options.owns.map((o) => o.kind)).toEqual(['Pod', 'Service', 'Deployment']);
    expect(() => readProjectOptions({ dir: '/x/a', owns: ['v1/Pod', 'v1/Pod'] }, '1.0.0')).toThrow(/--owns names Pod\.v1 twice/);
  });

  it('takes --admission validating or mutating, admitting pods by default, and refuses anything else or --owns with it', () => {
    expect(readProjectOptions({ dir: '/x/hook', admission: 'mutating' }, '1.0.0')).toMatchObject({ admission: 'mutating', for: { apiVersion: 'v1', kind: 'Pod' } });
    expect(readProjectOptions({ dir: '/x/hook', admission: 'validating', for: 'apps/v1/Deployment' }, '1.0.0').for.kind).toBe('Deployment');
    expect(() => readProjectOptions({ dir: '/x/hook', admission: 'both' }, '1.0.0')).toThrow('--admission "both": want validating or mutating');
    expect(() => readProjectOptions({ dir: '/x/hook', admission: 'mutating', owns: ['v1/Pod'] }, '1.0.0')).toThrow(/--owns is for reconcile functions/);
  });

  it('refuses a name that cannot name a Loop or an image', () => {
    expect(() => readProjectOptions({ dir: '/x/My_Function' }, '1.0.0')).toThrow(/--name "My_Function": want a DNS label/);
  });
});
