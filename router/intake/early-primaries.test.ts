import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { callsBeforePrimarySync, EarlyPrimaries, settleAtSync } from './early-primaries.ts';

const primary = (name: string, resourceVersion = '1', uid = `uid-${name}`): KubeObject => ({ metadata: { name, namespace: 'a', uid, resourceVersion } }) as KubeObject;
const loop = (spec: Record<string, unknown>) =>
  parseLoop({ metadata: { name: 'l' }, spec: { for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' }, function: { url: 'http://f.fns.svc:8080/' }, serviceAccount: { namespace: 'a', name: 'loop' }, ...spec } });

describe('callsBeforePrimarySync', () => {
  it('lets a Loop owning or relating to other kinds call before its primaries are listed, unless sharded', () => {
    const podSets = loop({ owns: [{ apiVersion: 'v1', kind: 'Pod' }], related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', selector: { matchLabels: { app: 'x' } } }] });
    expect(callsBeforePrimarySync(podSets, false)).toBe(true);
    expect(callsBeforePrimarySync(podSets, true)).toBe(false);
  });

  it('keeps a Loop that owns or relates to its own kind waiting for the complete list: its request would hold half of it', () => {
    expect(callsBeforePrimarySync(loop({ owns: [{ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' }] }), false)).toBe(false);
    expect(callsBeforePrimarySync(loop({ related: [{ name: 'peers', apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', selector: { matchLabels: { app: 'x' } } }] }), false)).toBe(false);
  });
});

describe('settleAtSync', () => {
  it('owes a first call to what was not queued early or was queued in another state, and returns what the list no longer holds', () => {
    const early = new Map(Object.entries({ 'a/same': primary('same'), 'a/changed': primary('changed'), 'a/reborn': primary('reborn', '1', 'old'), 'a/gone': primary('gone') }));
    const listed = [primary('same'), primary('changed', '2'), primary('reborn', '3', 'new'), primary('new')];
    const { firstCalls, gone } = settleAtSync(listed, early);
    expect(firstCalls.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)).toEqual(['changed@2', 'reborn@3', 'new@1']);
    expect(gone.map((o) => o.metadata?.uid)).toEqual(['old', 'uid-gone']);
  });
});

describe('EarlyPrimaries', () => {
  const early = (queueable: (o: KubeObject) => boolean = () => true) => {
    const queued: string[] = [];
    const e = new EarlyPrimaries({ queue: (o) => queueable(o) && queued.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`) > 0, slice: 2 });
    return { e, queued };
  };

  it('holds what the list brings until open, then queues it (the first key at once) and each later object as it comes, after the rest', () => {
    const { e, queued } = early();
    for (const name of ['p0', 'p1', 'p2', 'p3']) e.gathered(primary(name));
    expect(queued).toEqual([]);
    e.open();
    expect(queued).toEqual(['p0@1']);
    e.gathered(primary('p4'));
    expect(queued).toEqual(['p0@1', 'p1@1', 'p2@1', 'p3@1', 'p4@1']);
    expect(e.get('a/p4')?.metadata?.name).toBe('p4');
    expect(e.byUid('uid-p2')?.metadata?.name).toBe('p2');
  });

  it('queues a primary again only in a new state, and hears its children and related objects only once queued', () => {
    const { e, queued } = early((o) => o.metadata?.name !== 'skipped');
    e.open();
    e.gathered(primary('one'));
    e.gathered(primary('one'));
    e.gathered(primary('one', '2'));
    e.gathered(primary('skipped'));
    expect(queued).toEqual(['one@1', 'one@2']);
    expect(e.get('a/skipped')).toBeUndefined();
    expect(e.hears('a/one', { type: 'CHILD' })).toBe(true);
    expect(e.hears('a/one', { type: 'MODIFIED' })).toBe(false);
    expect(e.hears('a/skipped', { type: 'RELATED' })).toBe(false);
  });

  it('once closed at the sync, holds and queues nothing more', () => {
    const { e, queued } = early();
    e.open();
    e.gathered(primary('one'));
    expect(e.close([primary('one'), primary('two')]).firstCalls.map((o) => o.metadata?.name)).toEqual(['two']);
    e.gathered(primary('three'));
    expect([queued, e.get('a/one')]).toEqual([['one@1'], undefined]);
  });
});
