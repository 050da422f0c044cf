// Injects the planned faults at their times against the running platform. Faults overlap freely; two
// of the same kind against the same target wait for each other (one etcd can only be paused once).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Churn } from './churn.ts';
import type { FaultKind, PlannedFault } from './fault-plan.ts';
import { WEBHOOKS, type Platform } from './platform.ts';

export interface InjectedFault {
  kind: FaultKind;
  startMs: number;
  endMs: number;
  note: string;
  error?: string;
}

export interface FaultRunnerOptions {
  platform: Platform;
  churn: Churn;
  now: () => number;
  signal: AbortSignal;
  say: (line: string) => void;
}

export class FaultRunner {
  readonly injected: InjectedFault[] = [];
  /** When a webhook replica was killed (ms since start): reviews in flight then are lost. */
  readonly webhookKillsMs: number[] = [];
  readonly #o: FaultRunnerOptions;
  readonly #locks = new Map<string, Promise<void>>();
  readonly #running = new Set<Promise<void>>();
  readonly #timers: NodeJS.Timeout[] = [];
  #webhookTurn = 0;

  constructor(options: FaultRunnerOptions) {
    this.#o = options;
  }

  /** Schedules every fault relative to now (the churn's start). */
  schedule(plan: readonly PlannedFault[]): void {
    const origin = this.#o.now();
    for (const fault of plan) {
      this.#timers.push(setTimeout(() => this.#start(fault), Math.max(0, fault.atMs - (this.#o.now() - origin))));
    }
  }

  /** Cancels faults not started yet and waits for the running ones to finish (restarts included). */
  async drain(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** End of the last fault that ran. */
  get lastEndMs(): number {
    return this.injected.reduce((end, f) => Math.max(end, f.endMs), 0);
  }

  #start(fault: PlannedFault): void {
    const lockKey = `${fault.kind}/${fault.target ?? ''}`;
    const previous = this.#locks.get(lockKey) ?? Promise.resolve();
    const run = previous.then(() => this.#inject(fault));
    this.#locks.set(lockKey, run);
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  async #inject(fault: PlannedFault): Promise<void> {
    if (this.#o.signal.aborted) return;
    const startMs = this.#o.now();
    const record: InjectedFault = { kind: fault.kind, startMs, endMs: startMs, note: '' };
    try {
      record.note = await this.#apply(fault);
    } catch (error) {
      record.error = error instanceof Error ? error.message.split('\n')[0] ?? '' : String(error);
    }
    record.endMs = this.#o.now();
    this.injected.push(record);
    this.#o.say(`fault ${fault.kind} ${record.note}${record.error ? ` FAILED: ${record.error}` : ''} (${((record.endMs - startMs) / 1000).toFixed(1)}s)`);
  }

  /** A restart that fails (the API server is away) is retried: the soak must not lose a replica for good. */
  async #restart(role: string): Promise<void> {
    // Stopping (Ctrl+C, the run ended early): nothing is restarted that would only be stopped again.
    for (let attempt = 1; !this.#o.signal.aborted; attempt += 1) {
      try {
        await this.#o.platform.restart(role);
        return;
      } catch (error) {
        if (attempt >= 3 || this.#o.signal.aborted) throw error;
        await sleep(5000);
      }
    }
  }

  async #apply(fault: PlannedFault): Promise<string> {
    const { platform, churn } = this.#o;
    const hold = (): Promise<void> => sleep(fault.holdMs);
    switch (fault.kind) {
      case 'router-leader-kill': {
        let leader: string | undefined;
        const deadline = Date.now() + 30_000;
        while (!(leader = await platform.leader().catch(() => undefined)) && Date.now() < deadline) await sleep(500);
        if (!leader) throw new Error('no router held the lease for 30 s');
        await platform.kill(leader);
        await hold();
        await this.#restart(leader);
        return `killed leader ${leader}, restarted after ${fault.holdMs} ms`;
      }
      case 'function-kill': {
        const role = `function-${fault.target}`;
        await platform.kill(role);
        await hold();
        await this.#restart(role);
        return `killed ${role}, restarted after ${fault.holdMs} ms`;
      }
      case 'function-misbehave': {
        platform.functions.get(fault.target ?? '')?.misbehave(fault.misbehaviour ?? '500', Date.now() + fault.holdMs);
        await hold();
        return `${fault.target} answered ${fault.misbehaviour} for ${fault.holdMs} ms`;
      }
      case 'apiserver-restart':
        await platform.plane.restartApiServer();
        return 'kube-apiserver stopped and started';
      case 'etcd-pause': {
        const pid = platform.plane.pids().etcd;
        if (!pid) throw new Error('etcd is not running');
        process.kill(pid, 'SIGSTOP');
        try {
          await hold();
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        return `etcd paused ${fault.holdMs} ms`;
      }
      case 'webhook-kill': {
        const role = WEBHOOKS[this.#webhookTurn++ % WEBHOOKS.length]!;
        churn.burstWatcherPods(6);
        await sleep(30);
        this.webhookKillsMs.push(this.#o.now());
        await platform.kill(role);
        await hold();
        await this.#restart(role);
        return `killed ${role} during pod creates, restarted after ${fault.holdMs} ms`;
      }
      case 'cert-rotation': {
        // What `certs rotate` did to the Secret and the caBundle; the certificate details stay out of the line.
        const lines = (await platform.rotateCertificate()).split('\n').map((l) => l.trim());
        return lines.filter((l) => /^(Secret|caBundle)/.test(l)).map((l) => l.replace(/; CA:.*$/, '')).join('; ') || lines[0] || '';
      }
      case 'watch-cut':
        return `cut ${platform.apiProxy.cut()} connections to the API server`;
    }
  }
}
