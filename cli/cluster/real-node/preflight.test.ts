import { describe, expect, it } from 'vitest';
import { blockersMessage, realNodeBlockers } from './preflight.ts';

describe('real node preflight', () => {
  it('names root as missing for a non-root user, with how to get it', async () => {
    const blockers = await realNodeBlockers(1000);
    expect(blockers[0]).toMatch(/^root .*run as root/);
  });

  it('says it all in one line that names the Debian packages', () => {
    const line = blockersMessage(['root (...): run as root, e.g. sudo', 'runc (/usr/sbin/runc): apt-get install -y runc']);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('cannot run a real node: missing root');
    expect(line).toContain('apt-get install -y runc containernetworking-plugins iptables');
  });
});
