import { afterEach, describe, expect, it, vi } from 'vitest';
import { guardStartUp } from './start-up-signals.ts';

// SIGUSR2 stands in for SIGTERM: emitted, it reaches only the listeners (no real signal is sent); raised again
// by started(), it is a real signal, caught by the test's own listener as the shutdown handlers would catch it.
const SIGNAL = 'SIGUSR2';
const listeners: Array<() => void> = [];
afterEach(() => {
  for (const off of listeners.splice(0)) off();
});

function shutdownHandler(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => resolve(signal);
    process.on(SIGNAL, handler);
    listeners.push(() => process.off(SIGNAL, handler));
  });
}

describe('guardStartUp', () => {
  it('exit: a stop during start-up ends the process with 0 at once', () => {
    const exit = vi.fn();
    const guard = guardStartUp('exit', [SIGNAL], exit);
    listeners.push(guard.failed);
    process.emit(SIGNAL, SIGNAL);
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('hold: a stop during start-up is raised again for the shutdown handlers once start-up is over', async () => {
    const exit = vi.fn();
    const guard = guardStartUp('hold', [SIGNAL], exit);
    process.emit(SIGNAL, SIGNAL);
    const shutdown = shutdownHandler();
    guard.started();
    expect(await shutdown).toBe(SIGNAL);
    expect(exit).not.toHaveBeenCalled();
    expect(process.listenerCount(SIGNAL)).toBe(1);
  });

  it('switched to hold once start-up began writing: the stop waits for the usual shutdown', () => {
    const exit = vi.fn();
    const guard = guardStartUp('exit', [SIGNAL], exit);
    listeners.push(guard.failed);
    guard.hold();
    process.emit(SIGNAL, SIGNAL);
    expect(exit).not.toHaveBeenCalled();
  });

  it('without a signal during start-up, started() raises nothing and leaves no start-up listener behind', () => {
    const before = process.listenerCount(SIGNAL);
    const guard = guardStartUp('hold', [SIGNAL]);
    expect(process.listenerCount(SIGNAL)).toBe(before + 1);
    const kill = vi.spyOn(process, 'kill');
    guard.started();
    expect(kill).not.toHaveBeenCalled();
    kill.mockRestore();
    expect(process.listenerCount(SIGNAL)).toBe(before);
  });
});
