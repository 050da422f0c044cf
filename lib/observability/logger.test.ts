import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, MAX_LOG_STRING, parseLogLevel, reconcileLogger } from './logger.ts';

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

  it('clips long messages, fields and error messages so a huge input never makes a huge line', () => {
    const out = capture();
    const log = createLogger({ name: 'x', level: 'info', destination: out.stream });
    const huge = 'x'.repeat(1_000_000);
    log.warn({ message: huge, err: new Error(huge) }, huge);
    const raw = JSON.stringify(out.lines()[0]);
    expect(raw.length).toBeLessThan(20 * MAX_LOG_STRING);
    const [line] = out.lines() as Array<{ msg: string; message: string; err: { message: string } }>;
    expect(line?.msg).toMatch(/^x{2048}\.\.\. \(997952 more characters\)$/);
    expect(line?.message).toHaveLength(line?.msg.length ?? 0);
    expect(line?.err.message).toHaveLength(line?.msg.length ?? 0);
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
