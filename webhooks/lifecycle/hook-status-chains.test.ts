import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { HookStatusChains } from './hook-status-chains.ts';

describe('status writes, one chain per hook', () => {
  it("never lets one hook's hanging write hold another hook's, and keeps only the latest queued write", async () => {
    const chains = new HookStatusChains(createLogger({ name: 'test', level: 'silent' }));
    const written: string[] = [];
    let release = () => {};
    chains.enqueue('team-a/x', () => new Promise<void>((resolve) => (release = resolve)));
    chains.enqueue('team-a/x', async () => void written.push('a: superseded'));
    chains.enqueue('team-a/x', async () => void written.push('a: latest'));
    chains.enqueue('team-b/y', async () => void written.push('b'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual(['b']);
    release();
    await chains.idle();
    expect(written).toEqual(['b', 'a: latest']);
  });

  it('goes on after a failed write', async () => {
    const chains = new HookStatusChains(createLogger({ name: 'test', level: 'silent' }));
    const written: string[] = [];
    chains.enqueue('x', () => Promise.reject(new Error('timed out')));
    chains.enqueue('x', async () => void written.push('next'));
    await chains.idle();
    expect(written).toEqual(['next']);
  });
});
