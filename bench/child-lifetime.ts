// How a bench's child processes end: asked to stop, killed if they have not within 10 s, and killed with the bench
// if it exits first, through one exit hook for all of them (a hook per child piles up listeners over a long run).
import type { ChildProcess } from 'node:child_process';

const running = new Map<ChildProcess, NodeJS.Signals>();
let hooked = false;

/** Sends the child `signal` if the bench exits while the child still runs. */
export function killWithBench(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  running.set(child, signal);
  child.once('exit', () => running.delete(child));
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const [each, last] of running) each.kill(last);
  });
}

/** Asks the child to stop (`ask`; SIGTERM unless given), sends SIGKILL after 10 s, and resolves once it exited. */
export async function stopChild(child: ChildProcess, ask: () => void = () => child.kill('SIGTERM')): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  ask();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
