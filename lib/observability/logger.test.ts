import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, parseLogLevel, reconcileLogger } from './logger.ts';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes JSON lines whose reconcile child carries loop, key and reconcileId', () => {
    const out = capture();
    const log = createLogger({ name: 'router', level: 'debug', destination: out.stream });
    reconcileLogger(log, { loop: 'pods', key: 'default/web-0', reconcileId: 'r-1' }).debug('dispatched');
    const [line] = out.lines();
    expect(line).toMatchObject({ name: 'router', level: 'debug', loop: 'pods', key: 'default/web-0', reconcileId: 'r-1', msg: 'dispatched' });
    expect(typeof line?.time).toBe('string');
  });

  it('drops lines below the configured level', () => {
    const out = capture();
    const log = createLogger({ name: 'x', level: 'warn', destination: out.stream });
    log.info('quiet');
    log.warn('loud');
    expect(out.lines().map((l) => l.msg)).toEqual(['loud']);
  });
});

describe('parseLogLevel', () => {
  it('defaults to info and rejects unknown levels naming the setting', () => {
    expect(parseLogLevel(undefined)).toBe('info');
    expect(parseLogLevel('DEBUG')).toBe('debug');
    expect(() => parseLogLevel('loud', '--log-level')).toThrow(/--log-level: invalid log level "loud"/);
  });
});
