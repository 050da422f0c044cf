// Progress of the long first start (building the control-plane binaries, starting it): on a terminal one
// line redrawn in place with a bar, the step and the elapsed time; elsewhere each message once, plainly.

export interface Progress {
  update(message: string): void;
  /** Ends the live line (terminal) and prints a final message. */
  done(message: string): void;
}

interface Output {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const FRAMES = ['|', '/', '-', '\\'];

function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Counts the binaries ensureBinaries announced ("building a, b, c with go...") and those built since. */
export class BuildSteps {
  planned = 0;
  built = 0;
  observe(message: string): void {
    const plan = /^building (.+?) with go/.exec(message);
    if (plan) this.planned = (plan[1] ?? '').split(',').length;
    const built = /^built (.+?) in \d+s/.exec(message);
    if (built) this.built += (built[1] ?? '').split(',').length;
  }
  bar(width = 20): string | undefined {
    if (this.planned === 0) return undefined;
    const filled = Math.min(width, Math.round((Math.min(this.built, this.planned) / this.planned) * width));
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.min(this.built, this.planned)}/${this.planned}`;
  }
}

export function progressReporter(out: Output, title: string, now: () => number = Date.now): Progress {
  const started = now();
  const steps = new BuildSteps();
  if (!out.isTTY) {
    return {
      update(message) {
        steps.observe(message);
        out.write(`[${title} ${elapsed(now() - started)}] ${message.trim()}\n`);
      },
      done(message) {
        out.write(`[${title} ${elapsed(now() - started)}] ${message}\n`);
      },
    };
  }
  let last = 'starting';
  let frame = 0;
  let finished = false;
  const draw = (): void => {
    const bar = steps.bar();
    const line = `${FRAMES[frame++ % FRAMES.length]} ${title} ${elapsed(now() - started)} ${bar ? `${bar} ` : ''}${last}`;
    out.write(`\r\x1b[K${line.slice(0, Math.max(20, (out.columns ?? 100) - 1))}`);
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return {
    update(message) {
      steps.observe(message);
      last = message.trim();
      // After done() (e.g. the control plane reporting its shutdown) messages are plain lines.
      if (finished) out.write(`${last}\n`);
      else draw();
    },
    done(message) {
      clearInterval(timer);
      finished = true;
      out.write(`\r\x1b[K${message}\n`);
    },
  };
}
