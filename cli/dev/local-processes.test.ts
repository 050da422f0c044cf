// `kubeloop dev` processes run unauthenticated (functions, the router's ops port, the webhook): each must
// listen on loopback only. Checked on a real process through the kernel's socket table (Linux).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FUNCTION_NODE_FLAGS } from '../node-flags.ts';
import { startLocalProcess, stopLocalProcesses, type LocalProcess } from './local-processes.ts';

const LISTEN = '0A';

/** Local addresses (hex, as /proc/net/tcp{,6} print them) of the sockets listening on `port`. */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === LISTEN)
      .map((fields) => fields[1]!.split(':')[0]!),
  );
}

const logDir = mkdtempSync(join(tmpdir(), 'kubeloop-dev-bind-'));
const started: LocalProcess[] = [];
afterAll(async () => {
  await stopLocalProcesses(started);
  rmSync(logDir, { recursive: true, force: true });
});

describe.runIf(existsSync('/proc/net/tcp'))('kubeloop dev processes', () => {
  it('listen on 127.0.0.1 only', async () => {
    const fn = await startLocalProcess({ name: 'function-bind-check', args: ['function', 'pod-name-label'], logDir });
    started.push(fn);
    const port = Number(new URL(fn.url).port);
    // 0100007F is 127.0.0.1 in the table's little-endian hex; 00000000 would be every interface.
    expect(listeningAddresses(port)).toEqual(['0100007F']);
  });

  it('start a function with the node flags its image puts before cli/bin.js', async () => {
    const fn = await startLocalProcess({ name: 'function-flags-check', args: ['function', 'pod-name-label'], nodeFlags: FUNCTION_NODE_FLAGS, logDir });
    started.push(fn);
    const argv = readFileSync(`/proc/${fn.process.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 1 + FUNCTION_NODE_FLAGS.length)).toEqual(FUNCTION_NODE_FLAGS);
    expect(argv[1 + FUNCTION_NODE_FLAGS.length]).toMatch(/cli\/bin\.js$/);
  });
});
