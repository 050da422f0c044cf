// Which file changes reload a user's function in `kubeloop dev`.
import { describe, expect, it } from 'vitest';
import { triggersReload } from './user-function.ts';

describe('triggersReload', () => {
  it('reloads on source changes, and when the platform cannot say which file changed', () => {
    expect(triggersReload('index.ts')).toBe(true);
    expect(triggersReload('lib/labels.ts')).toBe(true);
    expect(triggersReload(null)).toBe(true);
  });

  it('ignores dependencies, build output and editor scratch files', () => {
    expect(triggersReload('node_modules/kubeloop/dist/index.js')).toBe(false);
    expect(triggersReload('dist/index.js')).toBe(false);
    expect(triggersReload('.git/index')).toBe(false);
    expect(triggersReload('index.ts~')).toBe(false);
    expect(triggersReload('.index.ts.swp')).toBe(false);
  });
});
