import { describe, expect, it } from 'vitest';
import { describeWatchEvent, MAX_EVENTS_PER_KEY, watchEvent, WatchEventLog } from './watch-events.ts';

const podSet = { apiVersion: 'example.com/v1', kind: 'PodSet', metadata: { namespace: 'default', name: 'web', resourceVersion: '42' } };

describe('WatchEventLog', () => {
  it('names the informer, the event type, the object and its resourceVersion', () => {
    expect(describeWatchEvent(watchEvent('primary', 'MODIFIED', podSet, 1))).toBe('primary MODIFIED example.com/v1/PodSet default/web rv=42');
  });

  it('hands a key its events once, oldest first', () => {
    const log = new WatchEventLog();
    log.add('default/web', watchEvent('primary', 'ADDED', podSet, 1));
    log.add('default/web', watchEvent('child', 'ADDED', { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'web-1' } }, 2));
    expect(log.take('default/web').map((e) => e.at)).toEqual([1, 2]);
    expect(log.take('default/web')).toEqual([]);
    expect(log.size).toBe(0);
  });

  it('keeps the first and the latest events of a storm, at most a few per key', () => {
    const log = new WatchEventLog();
    for (let at = 1; at <= 20; at++) log.add('k', watchEvent('child', 'MODIFIED', podSet, at));
    const kept = log.take('k').map((e) => e.at);
    expect(kept).toHaveLength(MAX_EVENTS_PER_KEY);
    expect(kept[0]).toBe(1);
    expect(kept.at(-1)).toBe(20);
  });
});
