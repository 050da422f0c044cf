// A per-request logger that becomes a pino child only when something logs through it. fastify makes one
// child per request for its `reqId` binding; most requests log nothing, and a pino child costs microseconds.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LogMethod = (...args: unknown[]) => void;

class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;
  #level: string | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    if (!this.#child) {
      this.#child = this.parent.child(this.bindings, this.options);
      if (this.#level !== undefined) this.#child.level = this.#level;
    }
    return this.#child;
  }

  #log(method: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', args: unknown[]): void {
    const real = this.#real();
    (real[method] as LogMethod).apply(real, args);
  }

  get level(): string {
    return this.#child?.level ?? this.#level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    if (this.#child) this.#child.level = level;
    else this.#level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(...args: unknown[]): void {
    this.#log('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** fastify's childLoggerFactory option: request loggers that cost one small object until first used. */
export const lazyChildLoggerFactory = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
