// The lazy request logger writes what a pino child would (bindings included) and only builds the child on first use.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChild, lazyChildLoggerFactory } from './lazy-child-logger.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('lazyChildLoggerFactory', () => {
  it('logs with the request bindings, at the parent level, and builds the pino child only when it logs', () => {
    const { logger, lines } = capture();
    let children = 0;
    const counting = Object.assign(Object.create(logger) as typeof logger, { child: (...a: Parameters<typeof logger.child>) => (children++, logger.child(...a)) });
    const log = lazyChildLoggerFactory(counting, { reqId: 'r1' }, {});
    expect(log.level).toBe('info');
    log.debug('hidden');
    expect(children).toBe(0); // a disabled level is decided from the parent's level table
    log.info({ a: 1 }, 'shown');
    expect(children).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r1', a: 1, msg: 'shown', level: 30 })]);
  });

  it('creates no child for a request that never logs, and honours a level set before first use', () => {
    const { logger, lines } = capture();
    let children = 0;
    const counting = Object.assign(Object.create(logger) as typeof logger, { child: (...a: Parameters<typeof logger.child>) => (children++, logger.child(...a)) });
    const quiet = lazyChildLoggerFactory(counting, { reqId: 'r2' }, {});
    expect(children).toBe(0);
    const chatty = lazyChildLoggerFactory(counting, { reqId: 'r3' }, {});
    chatty.level = 'debug';
    expect(chatty.level).toBe('debug');
    chatty.debug('now visible');
    expect(quiet.level).toBe('info');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r3', msg: 'now visible', level: 20 })]);
  });
});

describe('lazyChild', () => {
  it('answers isLevelEnabled like pino and writes nested bindings in order', () => {
    const { logger, lines } = capture();
    const reconcile = lazyChild(lazyChild(logger, { loop: 'l', key: 'ns/a' }), { reconcileId: 'r' });
    expect([reconcile.isLevelEnabled('debug'), reconcile.isLevelEnabled('info'), reconcile.isLevelEnabled('error')]).toEqual([false, true, true]);
    reconcile.debug('not written');
    reconcile.warn({ n: 1 }, 'written');
    expect(lines).toEqual([expect.objectContaining({ loop: 'l', key: 'ns/a', reconcileId: 'r', n: 1, msg: 'written', level: 40 })]);
  });
});
