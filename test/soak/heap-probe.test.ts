import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../cli/cluster/free-port.ts';
import { retainedHeapBytes } from './heap-probe.ts';

const MiB = 1024 * 1024;
let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

/** A Node process with an inspector that runs `script`, ready once it printed "ready". */
async function inspected(script: string): Promise<number> {
  const port = await freePort();
  child = spawn(process.execPath, [`--inspect=127.0.0.1:${port}`, '-e', `${script}; console.log('ready'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve) => child!.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  return port;
}

describe('retainedHeapBytes', () => {
  it('counts what is retained and not the garbage V8 has yet to collect', async () => {
    // 60 MiB of garbage, kept from collection only by not having been collected yet.
    const garbagePort = await inspected('for (let i = 0; i < 60; i++) globalThis.last = new Array(128 * 1024).fill(i + 0.5)');
    const garbage = await retainedHeapBytes(garbagePort);
    child?.kill('SIGKILL');
    const retainedPort = await inspected('globalThis.kept = Array.from({ length: 60 }, (_, i) => new Array(128 * 1024).fill(i + 0.5))');
    const retained = await retainedHeapBytes(retainedPort);
    expect(garbage).toBeLessThan(20 * MiB);
    expect(retained).toBeGreaterThan(60 * MiB);
  });

  it('counts Buffers held outside the JS heap', async () => {
    const port = await inspected('globalThis.kept = Array.from({ length: 40 }, () => Buffer.alloc(1024 * 1024, 1))');
    expect(await retainedHeapBytes(port)).toBeGreaterThan(40 * MiB);
  });

  it('answers undefined when nothing listens', async () => {
    expect(await retainedHeapBytes(await freePort(), 2000)).toBeUndefined();
  });
});
