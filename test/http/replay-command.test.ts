// `kubeloop replay` against a function on a real port: PASS/FAIL lines, path-level diffs, exit codes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureCommand } from './capture-console.ts';
import { run } from '../../cli/commands/replay.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { exampleFunction, expectedLabelPatch, MISBEHAVE_LABEL, podRequest } from './example-function.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';

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

function replay(argv: string[]): Promise<{ code: number; output: string }> {
  return captureCommand(run, argv);
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
  it('replays a folder of the podset fixtures as batches, each item compared alone, and a wrong recording fails alone', async () => {
    for (const mode of ['batch-json', 'batch-cloudevents']) {
      const { code, output } = await replay(['test/fixtures/podset', '--function', 'podset', '--mode', mode]);
      expect(output).not.toContain('FAIL');
      expect(output.match(/^PASS /gm)?.length).toBeGreaterThan(2);
      expect(code).toBe(0);
    }
    const wrong = write('wrong-in-batch.json', { description: 'recorded reply that differs', request: podRequest({ reconcileId: 'w' }), response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] } });
    write('right-in-batch.json', { description: 'recorded reply that matches', request: podRequest({ reconcileId: 'r' }), response: expectedResponse });
    const { code, output } = await replay([folder, '--to', served.url, '--mode', 'batch-cloudevents']);
    expect(output).toMatch(/^PASS .*right-in-batch\.json/m);
    expect(output).toMatch(new RegExp(`^FAIL .*${wrong.split('/').pop()!.replace('.', '\\.')}`, 'm'));
    expect(code).toBe(1);
    rmSync(wrong);
    rmSync(join(folder, 'right-in-batch.json'));
  });

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

  it('--update rewrites only the responses that differ, prints the diff, and the next replay passes', async () => {
    const other = mkdtempSync(join(tmpdir(), 'kubeloop-replay-update-'));
    const stale = structuredClone(expectedResponse);
    (stale.actions[1]?.patch?.[1] as { value: string }).value = 'false';
    const passing = JSON.stringify({ description: 'already right', request: podRequest(), response: expectedResponse }, null, 4);
    writeFileSync(join(other, 'a.json'), passing);
    writeFileSync(join(other, 'b.json'), JSON.stringify({ description: 'recorded before the change', request: podRequest(), response: stale }));
    try {
      const { code, output } = await replay([other, '--to', served.url, '--update']);
      expect(code).toBe(0);
      expect(output).toMatch(/PASS .*a\.json/);
      expect(output).toMatch(/UPDATED .*b\.json {2}recorded before the change/);
      expect(output).toContain('[#0/patch/1/value]: expected "false", got "true"');
      expect(output).toContain('1 passed, 0 failed, 1 updated');
      // The passing file is left byte for byte; the updated one keeps its description and request.
      expect(readFileSync(join(other, 'a.json'), 'utf8')).toBe(passing);
      const rewritten = JSON.parse(readFileSync(join(other, 'b.json'), 'utf8')) as { description: string; request: unknown; response: { actions: unknown[] } };
      expect(rewritten.description).toBe('recorded before the change');
      expect(rewritten.request).toEqual(podRequest());
      expect((await replay([other, '--to', served.url])).code).toBe(0);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('--update does not touch a case whose function fails, and still exits 1', async () => {
    const request = podRequest({ labels: { [MISBEHAVE_LABEL]: 'throw' } });
    const text = JSON.stringify({ description: 'function throws', request, response: expectedResponse });
    const file = write('throws-update.json', text);
    const { code, output } = await replay([file, '--to', served.url, '--update']);
    expect(code).toBe(1);
    expect(output).toMatch(/FAIL .*function throws\n +HTTP 500/);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('--function serves a built-in function in-process and replays its recorded fixtures', async () => {
    const { code, output } = await replay(['test/fixtures/pod-name-label', '--function', 'pod-name-label']);
    expect(output).toMatch(/\d+ passed, 0 failed/);
    expect(code).toBe(0);
  });

  it('--update records the response of a fixture written by hand with its request only, and the next replay passes', async () => {
    const file = write('by-hand.json', { description: 'written by hand', request: podRequest() });
    const without = await replay([file, '--to', served.url]);
    expect(without.code).toBe(1);
    expect(without.output).toMatch(/FAIL .*by-hand\.json {2}written by hand\n +no recorded "response" yet: run again with --update/);
    const recorded = await replay([file, '--to', served.url, '--update']);
    expect(recorded.code).toBe(0);
    expect(recorded.output).toMatch(/RECORDED .*by-hand\.json {2}written by hand/);
    expect(recorded.output).toContain('0 passed, 0 failed, 1 recorded');
    const fixture = JSON.parse(readFileSync(file, 'utf8')) as { description: string; response: { kind: string } };
    expect(fixture).toMatchObject({ description: 'written by hand', response: { kind: 'ReconcileResponse' } });
    expect((await replay([file, '--to', served.url])).output).toContain('1 passed, 0 failed');
  });

  it('prints each case as soon as it is done, before the next one is sent', async () => {
    const other = mkdtempSync(join(tmpdir(), 'kubeloop-replay-progress-'));
    writeFileSync(join(other, 'a.json'), JSON.stringify({ description: 'first', request: podRequest(), response: expectedResponse }));
    writeFileSync(join(other, 'b.json'), JSON.stringify({ description: 'second', request: podRequest(), response: expectedResponse }));
    const printed: string[] = [];
    const seenBySecond: string[] = [];
    let calls = 0;
    // Forwards to the function; when the second case arrives, notes what had been printed by then.
    const proxy = createServer((req, res) => {
      if (++calls === 2) seenBySecond.push(...printed);
      req.pipe(httpRequest(served.url, { method: 'POST', headers: req.headers }, (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    try {
      expect(await run([other, '--to', `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`])).toBe(0);
    } finally {
      log.mockRestore();
      proxy.close();
      rmSync(other, { recursive: true, force: true });
    }
    expect(seenBySecond).toEqual([expect.stringMatching(/^PASS .*a\.json {2}first$/)]);
  });

  it('reports a function that does not answer as "no answer within N ms"', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { code, output } = await replay([join(folder, 'labels.json'), '--to', `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, '--timeout-ms', '300']);
      expect(code).toBe(1);
      expect(output).toMatch(/: no answer within 300 ms/);
      expect(output).not.toContain('Headers Timeout Error');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('exits 2 for a fixture file or folder that does not exist, as render does', async () => {
    const { code, output } = await replay([join(folder, 'missing.json'), '--to', served.url]);
    expect(code).toBe(2);
    expect(output).toMatch(/missing\.json: no such file or folder/);
  });

  it('rejects bad usage with exit code 2', async () => {
    expect((await replay([join(folder, 'labels.json'), '--to', served.url, '--function', 'podset'])).code).toBe(2);
    expect((await replay([join(folder, 'labels.json'), '--function', './no-such-module.ts'])).output).toContain('no such file');
    expect((await replay([join(folder, 'labels.json')])).code).toBe(2);
    expect((await replay([join(folder, 'labels.json'), '--to', served.url, '--mode', 'grpc'])).output).toContain('--mode: "grpc"');
  });
});

describe('kubeloop replay --signing-secret', () => {
  const secret = generateSigningSecret();
  let signed: ServedFunction;
  beforeAll(async () => {
    signed = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', signingSecret: secret, logger: createLogger({ name: 't', level: 'silent' }) });
  });
  afterAll(() => signed.close());

  it('signs each request and accepts the replies signed for it, in every mode', async () => {
    for (const mode of ['json', 'binary', 'structured']) {
      const { code, output } = await replay([join(folder, 'labels.json'), '--to', signed.url, '--mode', mode, '--signing-secret', secret]);
      expect(output).toContain('1 passed, 0 failed');
      expect(code).toBe(0);
    }
  });

  it('reads the secret from --signing-secret-file, and serves --function with it', async () => {
    const file = write('secret.txt', `${secret}\n`);
    expect((await replay([join(folder, 'labels.json'), '--to', signed.url, '--signing-secret-file', file])).code).toBe(0);
    expect((await replay(['test/fixtures/pod-name-label', '--function', 'pod-name-label', '--signing-secret-file', file])).output).toMatch(/\d+ passed, 0 failed/);
  });

  it('fails a case the function refuses for a missing or wrong signature', async () => {
    const unsigned = await replay([join(folder, 'labels.json'), '--to', signed.url]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.output).toMatch(/HTTP 401: .*InvalidSignature/);
    const wrongKey = await replay([join(folder, 'labels.json'), '--to', signed.url, '--signing-secret', generateSigningSecret()]);
    expect(wrongKey.output).toMatch(/HTTP 401: .*no webhook-signature matches/);
  });

  it('fails a 200 reply that is not signed, as the router would refuse it', async () => {
    const { code, output } = await replay([join(folder, 'labels.json'), '--to', served.url, '--signing-secret', secret]);
    expect(code).toBe(1);
    expect(output).toContain('reply signature refused: missing signature');
  });

  it('rejects both secret flags at once, or a secret that is not whsec_ base64, with exit code 2', async () => {
    const file = write('secret2.txt', secret);
    expect((await replay([join(folder, 'labels.json'), '--to', signed.url, '--signing-secret', secret, '--signing-secret-file', file])).code).toBe(2);
    const bad = await replay([join(folder, 'labels.json'), '--to', signed.url, '--signing-secret', 'whsec_???']);
    expect(bad.code).toBe(2);
    expect(bad.output).toContain('--signing-secret is not "whsec_" followed by base64');
  });
});
