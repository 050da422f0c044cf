import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { InitialKeys } from './initial-keys.ts';

const objects = (n: number): KubeObject[] => Array.from({ length: n }, (_, i) => ({ metadata: { name: `p${i}`, namespace: 'a' } }) as KubeObject);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function keys(n: number, cached: (key: string) => boolean = () => true) {
  const queued: string[] = [];
  const initial = new InitialKeys({ objects: objects(n), cached, queue: (o) => queued.push(o.metadata!.name!), slice: 4 });
  return { initial, queued };
}

describe('InitialKeys', () => {
  it('queues the first key at once and the rest a slice per event-loop turn, in order, then resolves done', async () => {
    const { initial, queued } = keys(10);
    initial.start();
    expect(queued).toEqual(['p0']);
    await nextTurn();
    expect(queued).toHaveLength(5);
    await initial.done;
    expect(queued).toEqual(objects(10).map((o) => o.metadata!.name));
  });

  it('queues everything left at once when flushed (something else is about to be queued), and skips primaries no longer cached', async () => {
    const { initial, queued } = keys(10, (key) => key !== 'a/p8');
    initial.start();
    initial.flush();
    expect(queued).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p9']);
    expect(initial.pending).toBe(false);
    await initial.done;
  });

  it('queues nothing more once cancelled', async () => {
    const { initial, queued } = keys(10);
    initial.start();
    initial.cancel();
    await initial.done;
    await nextTurn();
    initial.flush();
    expect(queued).toEqual(['p0']);
  });
});
