// One function call's reply read straight from undici's dispatch callbacks: each chunk counted against the byte
// cap, the JSON value budget and the shared in-flight budget as it arrives. undici's request() built a Readable,
// an async iterator and an abort listener per call for the same bytes: about half the caller's CPU per call.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { JsonValueBudget } from './json-value-budget.ts';
import type { InFlightBytes, ReplyLimits } from './reply-limits.ts';

/** How much of an error body the log gets. */
export const DETAIL_BYTES = 2048;

export type ReplyFailureReason = 'TooLarge' | 'TooManyValues' | 'Overloaded';

export type ReplyRead =
  /** A 200 read whole within the limits: its bytes stay reserved until `release`. */
  | { kind: 'body'; headers: IncomingHttpHeaders; text: string; release: () => void }
  /** Any other status, with the start of its body (the log's). */
  | { kind: 'status'; status: number; headers: IncomingHttpHeaders; detail: string }
  /** A limit was crossed: the connection is closed and the rest never read. */
  | { kind: 'refused'; reason: ReplyFailureReason; message: string }
  /** The transport failed (connect, timeout, reset, the caller's abort): for the caller to classify. */
  | { kind: 'error'; error: unknown };

/**
 * An undici dispatch handler that settles once: `abort` ends the call with a reason (the caller's deadline),
 * before the request reached a socket as after, as undici's request() did with an AbortSignal.
 */
export class ReplyReader implements Dispatcher.DispatchHandler {
  readonly #limits: ReplyLimits;
  readonly #inFlight: InFlightBytes;
  readonly #settle: (read: ReplyRead) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #reason: Error | undefined;
  #settled = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #budget: JsonValueBudget | undefined;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(limits: ReplyLimits, inFlight: InFlightBytes, settle: (read: ReplyRead) => void) {
    this.#limits = limits;
    this.#inFlight = inFlight;
    this.#settle = settle;
  }

  /** Ends the call: the handler reports the reason as its transport error. */
  abort(reason: Error): void {
    if (this.#settled) return;
    if (this.#controller) this.#controller.abort(reason);
    else this.#reason = reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#reason) controller.abort(this.#reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx (100 Continue): the real status follows.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
    if (statusCode !== 200) return;
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.#limits.maxBytes) return this.#refuse(controller, 'TooLarge', `reply is larger than ${this.#limits.maxBytes} bytes; cut off at the limit`);
    this.#budget = new JsonValueBudget(this.#limits.maxValues, this.#limits.maxDepth);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#status !== 200) {
      // An error body: its start is enough for the log.
      this.#chunks.push(chunk);
      this.#size += chunk.length;
      if (this.#size >= DETAIL_BYTES) this.#finishStatus(controller);
      return;
    }
    if (this.#size + chunk.length > this.#limits.maxBytes) return this.#refuse(controller, 'TooLarge', `reply is larger than ${this.#limits.maxBytes} bytes; cut off at the limit`);
    if (!this.#inFlight.tryReserve(chunk.length)) {
      return this.#refuse(controller, 'Overloaded', `the caller's budget for replies in flight (${this.#inFlight.max} bytes) is in use by other replies; retried later`);
    }
    this.#size += chunk.length;
    this.#chunks.push(chunk);
    const verdict = this.#budget!.feed(chunk);
    if (!verdict.ok) this.#refuse(controller, 'TooManyValues', `reply ${verdict.message}; refused before parsing`);
  }

  onResponseEnd(controller: Dispatcher.DispatchController): void {
    if (this.#settled) return;
    if (this.#status !== 200) return this.#finishStatus(controller);
    this.#settled = true;
    const size = this.#size;
    const text = Buffer.concat(this.#chunks, size).toString('utf8');
    this.#chunks.length = 0;
    this.#settle({ kind: 'body', headers: this.#headers, text, release: () => this.#inFlight.release(size) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#release();
    this.#settle({ kind: 'error', error });
  }

  #finishStatus(controller: Dispatcher.DispatchController): void {
    this.#settled = true;
    const detail = Buffer.concat(this.#chunks).subarray(0, DETAIL_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
    // Whatever more the body holds is not read (the connection goes with it, as the stream's destroy did).
    if (this.#size >= DETAIL_BYTES) controller.abort(new Error('error body read up to its start'));
    this.#settle({ kind: 'status', status: this.#status, headers: this.#headers, detail });
  }

  /** The bytes a 200's body reserved so far (an error body's start reserves none). */
  #release(): void {
    if (this.#status === 200) this.#inFlight.release(this.#size);
  }

  #refuse(controller: Dispatcher.DispatchController, reason: ReplyFailureReason, message: string): void {
    this.#settled = true;
    this.#release();
    this.#chunks.length = 0;
    controller.abort(new Error(message));
    this.#settle({ kind: 'refused', reason, message });
  }
}
