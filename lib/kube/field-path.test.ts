import { describe, expect, it } from 'vitest';
import { parseFieldPath, projectFields, readField, readStrings } from './field-path.ts';

describe('parseFieldPath', () => {
  it('reads dotted keys, quoted keys with dots and slashes, [*] and indexes', () => {
    expect(parseFieldPath('.spec.volumes[*].configMap.name')).toEqual([{ key: 'spec' }, { key: 'volumes' }, { all: true }, { key: 'configMap' }, { key: 'name' }]);
    expect(parseFieldPath('metadata.annotations["kubeloop.dev/config"]')).toEqual([{ key: 'metadata' }, { key: 'annotations' }, { key: 'kubeloop.dev/config' }]);
    expect(parseFieldPath("spec.items[0]['x']")).toEqual([{ key: 'spec' }, { key: 'items' }, { index: 0 }, { key: 'x' }]);
  });

  it('refuses paths it cannot read, saying where', () => {
    expect(() => parseFieldPath('')).toThrow(/is empty/);
    expect(() => parseFieldPath('spec.a[')).toThrow(/unclosed/);
    expect(() => parseFieldPath('spec.a[x]')).toThrow(/\[\*\], \[<index>\]/);
    expect(() => parseFieldPath('spec..a')).toThrow(/no field name/);
    expect(() => parseFieldPath('spec[*]x')).toThrow(/expects "\."/);
  });
});

describe('readField and readStrings', () => {
  const deployment = {
    spec: { template: { spec: { volumes: [{ configMap: { name: 'a' } }, { secret: { secretName: 's' } }, { configMap: { name: 'b' } }] } }, names: ['x', 3, 'y'] },
  };
  it('fans out over [*] and skips what is missing', () => {
    expect(readStrings(deployment, parseFieldPath('spec.template.spec.volumes[*].configMap.name'))).toEqual(['a', 'b']);
    expect(readStrings(deployment, parseFieldPath('spec.names'))).toEqual(['x', 'y']);
    expect(readField(deployment, parseFieldPath('spec.missing.deeper'))).toEqual([]);
    expect(readField(deployment, parseFieldPath('spec.names[5]'))).toEqual([]);
  });
});

describe('projectFields', () => {
  it('keeps only the listed paths, arrays keeping their shape', () => {
    const object = { data: { a: '1', b: '2' }, spec: { ports: [{ port: 80, name: 'http' }, { port: 443 }], other: true } };
    expect(projectFields(object, [parseFieldPath('data.a'), parseFieldPath('spec.ports[*].port')])).toEqual({ data: { a: '1' }, spec: { ports: [{ port: 80 }, { port: 443 }] } });
  });
});
