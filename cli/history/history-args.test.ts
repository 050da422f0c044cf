import { describe, expect, it } from 'vitest';
import { readHistoryTarget } from './history-args.ts';

describe('readHistoryTarget', () => {
  it('reads a namespaced Loop kubectl-style: -n names the Loop\'s namespace and the object\'s', () => {
    expect(readHistoryTarget(['web'], { loop: 'podset', namespace: 'team-a' })).toEqual({ loop: 'team-a/podset', namespace: 'team-a', name: 'web' });
  });

  it('takes the namespace from NAMESPACE/NAME when -n is absent, or both when they agree', () => {
    expect(readHistoryTarget(['team-a/web'], { loop: 'podset' })).toEqual({ loop: 'team-a/podset', namespace: 'team-a', name: 'web' });
    expect(readHistoryTarget(['team-a/web'], { loop: 'podset', namespace: 'team-a' })).toEqual({ loop: 'team-a/podset', namespace: 'team-a', name: 'web' });
    expect(readHistoryTarget(['web'], { loop: 'team-a/podset', namespace: 'team-a' })).toEqual({ loop: 'team-a/podset', namespace: 'team-a', name: 'web' });
  });

  it('reads a ClusterLoop with a namespaced object, and with a cluster-scoped one', () => {
    expect(readHistoryTarget(['web'], { 'cluster-loop': 'podset', namespace: 'team-a' })).toEqual({ loop: 'podset', namespace: 'team-a', name: 'web' });
    expect(readHistoryTarget(['node-1'], { 'cluster-loop': 'node-labeler' })).toEqual({ loop: 'node-labeler', name: 'node-1' });
  });

  it('keeps the positional form, with the object namespace from NAMESPACE/NAME or -n', () => {
    expect(readHistoryTarget(['podset', 'default/web'], {})).toEqual({ loop: 'podset', namespace: 'default', name: 'web' });
    expect(readHistoryTarget(['podset', 'web'], { namespace: 'team-a' })).toEqual({ loop: 'podset', namespace: 'team-a', name: 'web' });
    expect(readHistoryTarget(['team-a/podset', 'team-a/web'], {})).toEqual({ loop: 'team-a/podset', namespace: 'team-a', name: 'web' });
    expect(readHistoryTarget(['node-labeler', 'node-1'], {})).toEqual({ loop: 'node-labeler', name: 'node-1' });
  });

  it.each([
    ['--loop and --cluster-loop together', ['web'], { loop: 'a', 'cluster-loop': 'b', namespace: 'x' }, /not both/],
    ['--loop without a namespace', ['web'], { loop: 'podset' }, /add -n NAMESPACE.*--cluster-loop podset/],
    ['--loop with a namespace other than the object\'s', ['team-b/web'], { loop: 'team-a/podset' }, /namespace team-a only, not of team-b/],
    ['--loop NS/NAME for a cluster-scoped object', ['node-1'], { loop: 'team-a/podset' }, /add -n team-a/],
    ['-n disagreeing with NAMESPACE/NAME', ['team-a/web'], { loop: 'podset', namespace: 'team-b' }, /namespace team-a, but -n says team-b/],
    ['--cluster-loop with a namespace', ['web'], { 'cluster-loop': 'team-a/podset', namespace: 'team-a' }, /use --loop podset -n team-a/],
    ['a flag and a positional Loop as well', ['podset', 'web'], { loop: 'podset', namespace: 'a' }, /unexpected argument "web".*already named by --loop/],
    ['no object with a flag', [], { loop: 'podset', namespace: 'a' }, /name the object/],
    ['only the Loop positionally', ['podset'], {}, /give the Loop and the object/],
    ['nothing at all', [], {}, /give the Loop and the object/],
    ['three positionals', ['podset', 'web', 'more'], {}, /unexpected argument "more"/],
    ['an object that is not NAMESPACE/NAME', ['podset', 'a/b/c'], {}, /"a\/b\/c" is not NAMESPACE\/NAME or NAME/],
    ['a namespace that is no DNS label', ['web'], { loop: 'podset', namespace: 'Team_A' }, /"Team_A" is not a namespace name/],
    ['a Loop name that is no object name', ['web'], { loop: 'Pod Set', namespace: 'a' }, /--loop: "Pod Set" is not a Loop name/],
    ['a positional identity with two slashes', ['a/b/c', 'web'], {}, /not a Loop identity/],
  ] as const)('refuses %s with a message', (_what, positionals, flags, message) => {
    const result = readHistoryTarget(positionals, flags);
    expect(typeof result).toBe('string');
    expect(result).toMatch(message);
  });
});
