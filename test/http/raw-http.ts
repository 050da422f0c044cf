// Raw HTTP/1.1 over a socket for the tests that compare servers byte for byte (the function images' node:http
// server and the router's ops server against the fastify bootstrap): what a connection receives, normalized.
import { connect } from 'node:net';
import { expect } from 'vitest';

/** One HTTP/1.1 request as bytes, the connection closed after it; a payload gets its Content-Length. */
export function rawRequest(host: string, method: string, path: string, headers = '', payload?: string): string {
  return `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${headers}${payload === undefined ? '' : `Content-Length: ${Buffer.byteLength(payload)}\r\n`}\r\n${payload ?? ''}`;
}

/** The fastify server and its node:http twin answer `text` with the same bytes (but for the date and generated ids). */
export async function expectAlike(fastifyUrl: string, nodeUrl: string, text: string): Promise<void> {
  const [expected, actual] = [await raw(fastifyUrl, text), await raw(nodeUrl, text)];
  expect(expected).toMatch(/^HTTP\/1\.1 \d{3} /);
  expect(normalized(actual)).toBe(normalized(expected));
}

/** Writes `text` on a fresh connection and returns everything the server sent until it closed. */
export function raw(url: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {}); // a reset after a refused request is the server hanging up
    socket.on('close', () => resolve(answer));
    socket.write(text);
  });
}

/** Status line, headers (sorted, lower-case) and body, with what differs per call (date, generated ids) blanked. */
export function normalized(answer: string): string {
  const split = answer.indexOf('\r\n\r\n');
  const head = answer.slice(0, split).split('\r\n');
  const lines = [head[0], ...head.slice(1).map((l) => l.toLowerCase()).sort()].map((l) => (l?.startsWith('date: ') ? 'date: -' : l));
  return `${lines.join('\n')}\n\n${answer.slice(split + 4)}`.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');
}

/** What a raw connection receives, one answer at a time: next(pattern) resolves once the unread bytes match it whole. */
export function answers(socket: ReturnType<typeof connect>): { next(pattern: RegExp): Promise<string>; closed: Promise<void> } {
  let unread = '';
  let waiting: { pattern: RegExp; resolve: (text: string) => void } | undefined;
  const check = () => {
    if (waiting && waiting.pattern.test(unread)) {
      const { resolve } = waiting;
      waiting = undefined;
      const text = unread;
      unread = '';
      resolve(text);
    }
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    unread += chunk;
    check();
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return {
    next: (pattern) =>
      new Promise((resolve) => {
        waiting = { pattern, resolve };
        check();
      }),
    closed,
  };
}
