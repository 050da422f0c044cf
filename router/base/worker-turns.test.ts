import { describe, expect, it } from 'vitest';
import { ALONE, companionsFor, WorkerTurns } from './worker-turns.ts';

describe('companionsFor', () => {
  it('takes none while a free worker could start the waiting keys', () => {
    // 16 workers, 4 busy, this one starting: 11 free for 11 waiting keys.
    expect(companionsFor(11, 16, 4, 4)).toBe(0);
    expect(companionsFor(0, 16, 15, 4)).toBe(0);
  });

  it('takes none for a burst: fewer keys waiting than the queue has workers', () => {
    // Two beyond the 11 free workers, but 13 keys are one round's work for 16 workers.
    expect(companionsFor(13, 16, 4, 4)).toBe(0);
    expect(companionsFor(15, 16, 15, 4)).toBe(0);
  });

  it('takes the backlog\'s keys beyond what free workers could start, at most groupMax - 1', () => {
    expect(companionsFor(18, 16, 4, 4)).toBe(3);
    expect(companionsFor(16, 16, 6, 4)).toBe(3);
    expect(companionsFor(17, 16, 2, 4)).toBe(3);
    expect(companionsFor(16, 16, 1, 4)).toBe(2);
    expect(companionsFor(1900, 16, 15, 4)).toBe(3);
    expect(companionsFor(1900, 16, 15, 1)).toBe(0);
  });
});

describe('WorkerTurns', () => {
  it('gives the turns one at a time, in the order they were asked for', async () => {
    const turns = new WorkerTurns(3);
    const order: string[] = [];
    const take = async (name: string, hold: Promise<void>) => {
      const release = await turns.turn();
      order.push(`${name} in`);
      await hold;
      order.push(`${name} out`);
      release();
    };
    let letAGo!: () => void;
    const a = take('a', new Promise<void>((resolve) => (letAGo = resolve)));
    const b = take('b', Promise.resolve());
    const c = take('c', Promise.resolve());
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(order).toEqual(['a in']);
    letAGo();
    await Promise.all([a, b, c]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
  });

  it('hands a turn on once when its release is called twice', async () => {
    const turns = new WorkerTurns(3);
    const first = await turns.turn();
    const second = turns.turn();
    const third = turns.turn();
    let thirdIn = false;
    void third.then(() => (thirdIn = true));
    first();
    first();
    await second;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(thirdIn).toBe(false);
  });

  it('runs a write in its turn, and hands the turn on when the write fails', async () => {
    const turns = new WorkerTurns(2);
    const order: string[] = [];
    const failing = turns.inTurn(async () => {
      order.push('first');
      throw new Error('refused');
    });
    const next = turns.inTurn(async () => order.push('second'));
    await expect(failing).rejects.toThrow('refused');
    await next;
    expect(order).toEqual(['first', 'second']);
  });

  it('ALONE: one key, its write started at once, in the same turn of the event loop', async () => {
    expect(ALONE.keys).toBe(1);
    let started = false;
    const written = ALONE.inTurn(async () => (started = true));
    expect(started).toBe(true);
    await written;
  });
});
