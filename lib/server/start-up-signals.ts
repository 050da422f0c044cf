// SIGTERM/SIGINT received while a command is still starting (its probes may already answer, so a kubelet or a
// developer can stop it then): held until the shutdown handlers are on, or ending the process at once while
// nothing has been written yet. One helper for `kubeloop webhook` and `kubeloop router`.

/** What a signal during start-up does: `hold` it for the usual shutdown, or `exit` 0 at once. */
export type StartUpSignalMode = 'hold' | 'exit';

export interface StartUpSignals {
  /** From now on a signal is held (start-up has begun writing, so only the usual shutdown may end it). */
  hold(): void;
  /**
   * Start-up is over and the shutdown handlers are on: the start-up handlers come off and a held signal is
   * raised again, for the shutdown handlers. Call it only after they are on: removing a signal's last listener
   * closes its handle, and a signal caught but not yet dispatched would be lost with it (a process told to stop
   * just as it finished starting kept running until SIGKILL; seen in the images e2e under load).
   */
  started(): void;
  /** Start-up failed: the handlers come off, and the caller ends with its error. */
  failed(): void;
}

export function guardStartUp(mode: StartUpSignalMode, signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'], exit: (code: number) => void = (code) => process.exit(code)): StartUpSignals {
  let current = mode;
  let held: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (current === 'exit') exit(0);
    else held ??= signal;
  };
  for (const signal of signals) process.on(signal, onSignal);
  const off = () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  return {
    hold: () => void (current = 'hold'),
    started: () => {
      off();
      if (held) process.kill(process.pid, held);
    },
    failed: off,
  };
}
