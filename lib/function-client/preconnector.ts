// A function's connection opened ahead of its first call (docs/router.md, "Connections opened ahead of need").
// undici's Agent has no pre-connect, so this wraps the connector an Agent connects through: `open` connects through
// that same connector (address guard, CA bundle) and keeps the socket; the Agent's next connect to the origin takes
// it, or waits for it while it is still connecting. Unused, it is closed; a failure is left for the call to meet.
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { portOf, socketHost } from './guarded-connect.ts';

/** How long an opened socket waits for its first call: under the 5 s idle timeouts HTTP servers commonly apply. */
export const PRECONNECT_IDLE_MS = 4_000;

type ConnectOptions = buildConnector.Options;
type Callback = buildConnector.Callback;

/** A connection open and kept; `release` takes it back from the keeping (timer, listeners). */
interface Kept {
  state: 'open';
  socket: Socket;
  release: () => void;
}

/** Per origin: a connection being opened ahead (with the connect waiting for it, if any), or one open and kept. */
export type Ahead = { state: 'opening'; taker?: { options: ConnectOptions; callback: Callback } } | Kept;

/** An origin as undici's connect options name it, its default port filled in. */
export function originKey(options: Pick<ConnectOptions, 'protocol' | 'hostname' | 'port'>): string {
  return `${options.protocol}//${options.hostname}:${portOf(options)}`;
}

/**
 * What the Agent's connect to an origin does (pure): take the socket kept for it, wait for the one being opened
 * (only the first connect: the others open their own, as they would have), or connect as without this.
 */
export function connectStep(ahead: Ahead | undefined): 'take' | 'join' | 'connect' {
  if (ahead?.state === 'open') return 'take';
  if (ahead?.state === 'opening' && !ahead.taker) return 'join';
  return 'connect';
}

/** Whether to open a connection ahead (pure): one per origin at most, and none while the Agent has one open there. */
export function opensAhead(ahead: Ahead | undefined, openToOrigin: number, closed: boolean): boolean {
  return !closed && ahead === undefined && openToOrigin === 0;
}

/** The options undici's Client passes its connector for `url`'s origin (an IPv6 host without its brackets). */
export function connectOptionsFor(url: URL): ConnectOptions {
  return { protocol: url.protocol, hostname: socketHost(url), host: url.host, port: url.port };
}

const noop = (): void => {};

export class Preconnector {
  readonly #connect: buildConnector.connector;
  readonly #idleMs: number;
  readonly #ahead = new Map<string, Ahead>();
  /** Sockets given to the Agent and still open, per origin: while there is one, nothing is opened ahead. */
  readonly #open = new Map<string, number>();
  #closed = false;

  constructor(connect: buildConnector.connector, idleMs = PRECONNECT_IDLE_MS) {
    this.#connect = connect;
    this.#idleMs = idleMs;
  }

  /** Sockets kept, unused (tests, and the check that close() leaves none). */
  get kept(): number {
    let n = 0;
    for (const ahead of this.#ahead.values()) if (ahead.state === 'open') n++;
    return n;
  }

  /** The connector to give the Agent. */
  readonly connector: buildConnector.connector = (options, callback) => {
    const key = originKey(options);
    const ahead = this.#ahead.get(key);
    const step = connectStep(ahead);
    if (step === 'take' && ahead?.state === 'open') {
      this.#ahead.delete(key);
      ahead.release();
      // Never synchronously: undici's Client is still inside its connect() when a connector answers.
      queueMicrotask(() => this.#handOver(key, ahead.socket, options, callback));
    } else if (step === 'join' && ahead?.state === 'opening') {
      ahead.taker = { options, callback };
    } else {
      this.#connectCounted(key, options, callback);
    }
  };

  /** Opens one connection to `url`'s origin unless one is kept, opening or open; never throws, never reports. */
  open(url: URL): void {
    const options = connectOptionsFor(url);
    const key = originKey(options);
    if (!opensAhead(this.#ahead.get(key), this.#open.get(key) ?? 0, this.#closed)) return;
    const ahead: Ahead = { state: 'opening' };
    this.#ahead.set(key, ahead);
    this.#connect(options, (error, socket) => {
      if (this.#ahead.get(key) === ahead) this.#ahead.delete(key);
      const taker = ahead.taker;
      // Refused or failed: the call's own connect meets the same refusal or failure, and reports it as it did.
      if (error || !socket) {
        if (taker) this.#connectCounted(key, taker.options, taker.callback);
        return;
      }
      if (taker) this.#handOver(key, socket, taker.options, taker.callback);
      else if (this.#closed) socket.destroy().on('error', noop);
      else this.#keep(key, socket);
    });
  }

  /** Closes every kept socket; nothing is opened ahead any more (a connection still opening is closed as it opens). */
  close(): void {
    this.#closed = true;
    for (const [key, ahead] of this.#ahead) {
      if (ahead.state !== 'open') continue;
      this.#ahead.delete(key);
      ahead.release();
      ahead.socket.destroy();
    }
  }

  /** Kept unreferenced (it holds no process open) until taken, closed, or unused for idleMs. */
  #keep(key: string, socket: Socket): void {
    const drop = () => {
      if (this.#ahead.get(key) === kept) this.#ahead.delete(key);
      kept.release();
      socket.destroy();
    };
    // Anything readable before a request (the server's close, or bytes nobody asked for) makes it unusable.
    // The noop stays: an error between release() and the Agent's own listener must not be thrown.
    socket.on('error', noop).on('readable', drop).on('error', drop).on('close', drop);
    const timer = setTimeout(drop, this.#idleMs).unref();
    const kept: Kept = {
      state: 'open',
      socket,
      release: () => {
        clearTimeout(timer);
        socket.off('readable', drop).off('error', drop).off('close', drop);
      },
    };
    socket.unref();
    this.#ahead.set(key, kept);
  }

  #handOver(key: string, socket: Socket, options: ConnectOptions, callback: Callback): void {
    if (socket.destroyed || !socket.writable || socket.readableEnded) {
      socket.destroy().on('error', noop);
      this.#connectCounted(key, options, callback);
      return;
    }
    socket.ref();
    this.#count(key, socket);
    callback(null, socket);
  }

  #connectCounted(key: string, options: ConnectOptions, callback: Callback): void {
    this.#connect(options, (error, socket) => {
      if (error || !socket) callback(error ?? new Error('no socket'), null);
      else {
        this.#count(key, socket);
        callback(null, socket);
      }
    });
  }

  #count(key: string, socket: Socket): void {
    this.#open.set(key, (this.#open.get(key) ?? 0) + 1);
    socket.once('close', () => {
      const left = (this.#open.get(key) ?? 1) - 1;
      if (left === 0) this.#open.delete(key);
      else this.#open.set(key, left);
    });
  }
}
