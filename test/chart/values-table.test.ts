import { describe as suite, expect, it } from 'vitest';
import { describe, readChartReadme, valueRows, valuesTable, withValuesTable, START_MARKER, END_MARKER } from './values-table.ts';

suite('the chart README values table', () => {
  it('is current: run `npm run chart:readme` after editing charts/kubeloop/values.yaml', async () => {
    const { current, generated } = await readChartReadme();
    expect(current).toBe(generated);
  });

  it('takes a description from its `-- ` line on, else from the plain comment right above the key', () => {
    expect(describe(' file header\n\n -- Images.\n Each has a tag.')).toBe('Images. Each has a tag.');
    expect(describe(' A note first\n -- The real one')).toBe('The real one');
    expect(describe(' Plain comment')).toBe('Plain comment');
    expect(describe(undefined)).toBe('');
  });

  it('lists leaves by dotted key, treats a described map without commented keys as one value, and recurses into the rest', () => {
    const rows = valueRows([
      '# -- The router.',
      'router:',
      '  # -- Replicas.',
      '  replicas: 2',
      '  resources:',
      '    requests: { cpu: 50m }',
      '# -- Labels, all of them.',
      'labels: { a: "1" }',
      'enabled: false',
    ].join('\n'));
    expect(rows).toEqual([
      { key: 'router', type: 'object', default: '', description: 'The router.' },
      { key: 'router.replicas', type: 'int', default: '2', description: 'Replicas.' },
      { key: 'router.resources.requests.cpu', type: 'string', default: '"50m"', description: '' },
      { key: 'labels', type: 'object', default: '{"a":"1"}', description: 'Labels, all of them.' },
      { key: 'enabled', type: 'bool', default: 'false', description: '' },
    ]);
    expect(valuesTable([{ key: 'a', type: 'string', default: '"x|y"', description: 'one | <two>' }])).toContain('| `a` | string | `"x\\|y"` | one \\| &lt;two&gt; |');
  });

  it('replaces only what lies between the markers, and refuses a README without them', () => {
    const readme = `intro\n${START_MARKER}\nold\n${END_MARKER}\noutro\n`;
    const out = withValuesTable(readme, 'a: 1\n');
    expect(out.startsWith(`intro\n${START_MARKER}\n| Key |`)).toBe(true);
    expect(out.endsWith(`${END_MARKER}\noutro\n`)).toBe(true);
    expect(out).not.toContain('old');
    expect(() => withValuesTable('no markers', 'a: 1\n')).toThrow(/values:start/);
  });
});
