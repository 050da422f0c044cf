// `kubeloop replay` against a function on a real port: PASS/FAIL lines, path-level diffs, exit codes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../cli/commands/replay.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { exampleFunction, expectedLabelPatch, MISBEHAVE_LABEL, podRequest } from './example-function.ts';

const folder = mkdtempSync(join(tmpdir(), 'kubeloop-replay-'));
let served: ServedFunction;

const expectedResponse = {
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileResponse',
  actions: [
    { op: 'event', type: 'Normal', reason: 'Labelled', message: 'labelled web-0' },
    { op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-0' }, patch: expectedLabelPatch },
  ],
};

function write(name: string, content: unknown): string {
  const file = join(folder, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

async function replay(argv: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
  try {
    return { code: await run(argv), output: lines.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

beforeAll(async () => {
  served = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 't', level: 'silent' }) });
  write('labels.json', { description: 'labels the pod (events listed before the patch: order across targets is free)', request: podRequest(), response: expectedResponse });
});
afterAll(async () => {
  await served.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('kubeloop replay', () => {
  it('passes a recorded case in every transport mode and exits 0', async () => {
    for (const mode of ['json', 'binary', 'structured']) {
      const { code, output } = await replay([join(folder, 'labels.json'), '--to', served.url, '--mode', mode]);
      expect(output).toContain('PASS');
      expect(code).toBe(0);
    }
  });

  it('prints FAIL with a path-level diff and exits 1 on a mismatch', async () => {
    const other = mkdtempSync(join(tmpdir(), 'kubeloop-replay-'));
    const wrong = structuredClone(expectedResponse);
    (wrong.actions[1]?.patch?.[1] as { value: string }).value = 'false';
    writeFileSync(join(other, 'a.json'), JSON.stringify({ description: 'passes', request: podRequest(), response: expectedResponse }));
    writeFileSync(join(other, 'b.json'), JSON.stringify({ description: 'expects the wrong label value', request: podRequest(), response: wrong }));
    const { code, output } = await replay([other, '--to', served.url]);
    rmSync(other, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(output).toMatch(/PASS .*a\.json/);
    expect(output).toMatch(/FAIL .*b\.json {2}expects the wrong label value/);
    expect(output).toContain('actions on v1 Pod shop/web-0 [#0/patch/1/value]: expected "false", got "true"');
    expect(output).toContain('1 passed, 1 failed');
  });

  it('compares event messages only with --strict', async () => {
    const reworded = structuredClone(expectedResponse);
    (reworded.actions[0] as { message: string }).message = 'the pod web-0 now carries its name';
    const file = write('reworded.json', { description: 'same event, other words', request: podRequest(), response: reworded });
    expect((await replay([file, '--to', served.url])).code).toBe(0);
    const strict = await replay([file, '--to', served.url, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.output).toContain('events: missing {"op":"event","type":"Normal","reason":"Labelled","message":"the pod web-0 now carries its name"}');
  });

  it('fails on an error reply, an invalid fixture and an unreachable function', async () => {
    const failing = write('throws.json', { description: 'function throws', request: podRequest({ labels: { [MISBEHAVE_LABEL]: 'throw' } }), response: expectedResponse });
    const broken = write('broken.json', '{"description": "no request"');
    const errorReply = await replay([failing, '--to', served.url]);
    expect(errorReply.code).toBe(1);
    expect(errorReply.output).toMatch(/HTTP 500: .*threw: cannot reconcile this object/);
    const invalid = await replay([broken, '--to', served.url]);
    expect(invalid.output).toMatch(/invalid fixture: not valid JSON/);
    expect(invalid.code).toBe(1);
    const unreachable = await replay([join(folder, 'labels.json'), '--to', 'http://127.0.0.1:1/', '--timeout-ms', '2000']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(/POST http:\/\/127\.0\.0\.1:1\/ failed/);
  });

  it('rejects bad usage with exit code 2', async () => {
    expect((await replay([join(folder, 'labels.json')])).code).toBe(2);
    expect((await replay([join(folder, 'labels.json'), '--to', served.url, '--mode', 'grpc'])).output).toContain('--mode: "grpc"');
  });
});
