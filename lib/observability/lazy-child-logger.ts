// A logger that becomes a pino child only when something logs through it at an enabled level: fastify makes
// one child per request (reqId) and the router one per reconcile (loop, key, reconcileId); most log nothing,
// and a pino child (bindings serialised) costs microseconds each.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

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

  /** Whether `level` would be written, decided without building the child where pino's level table is at hand. */
  isLevelEnabled(level: string): boolean {
    if (this.#child) return (this.#child as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? true;
    const parent = this.parent as Partial<Pick<Logger, 'levels' | 'isLevelEnabled'>>;
    if (this.#level === undefined && this.options.level === undefined && parent.isLevelEnabled) return parent.isLevelEnabled(level);
    const values = parent.levels?.values;
    const threshold = values?.[this.level];
    if (values === undefined || threshold === undefined) return true;
    return (values[level] ?? Infinity) >= threshold;
  }

  #log(method: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', args: unknown[]): void {
    if (method === 'silent' || !this.isLevelEnabled(method)) return;
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

/** parent.child(bindings), built on first use: the logging methods, level, isLevelEnabled and child of a pino Logger. */
export const lazyChild = (parent: Logger, bindings: Bindings): Logger => new LazyChildLogger(parent, bindings, {}) as unknown as Logger;
