import { describe, expect, it } from 'vitest';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, loopSpecErrorReason, parseLoop } from './loop-spec.ts';

const valid = {
  metadata: { name: 'podset', generation: 2 },
  spec: {
    for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    function: { url: 'http://kubeloop-podset.kubeloop-system.svc:8080/' },
    serviceAccount: { namespace: 'kubeloop-system', name: 'kubeloop-loop-podset' },
  },
};

describe('parseLoop', () => {
  it('applies defaults and derives the finalizer and field manager', () => {
    const loop = parseLoop(valid);
    expect(loop).toMatchObject({
      name: 'podset',
      generation: 2,
      timeoutMs: 10_000,
      maxConcurrency: 8,
      resyncMs: 600_000,
      metadataOnly: false,
      namespaces: undefined,
      finalizer: 'kubeloop.dev/podset',
      fieldManager: 'kubeloop/podset',
      serviceAccount: { namespace: 'kubeloop-system', name: 'kubeloop-loop-podset' },
    });
  });
  it('refuses a Loop without a ServiceAccount with its own reason', () => {
    const { serviceAccount: _omitted, ...spec } = valid.spec;
    let error: unknown;
    try {
      parseLoop({ metadata: valid.metadata, spec: spec as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LoopSpecError);
    expect((error as Error).message).toContain('spec.serviceAccount is required');
    expect(loopSpecErrorReason(error as LoopSpecError)).toBe('ServiceAccountRequired');
  });
  it('checks the function URL against the policy, loopback only in dev mode', () => {
    const at = (url: string) => ({ metadata: valid.metadata, spec: { ...valid.spec, function: { url } } });
    expect(() => parseLoop(at('http://169.254.169.254/'))).toThrow('spec.function.url "http://169.254.169.254/": host 169.254.169.254 is an IP literal');
    expect(() => parseLoop(at('http://127.0.0.1:9000/'))).toThrow('IP literal');
    expect(parseLoop(at('http://127.0.0.1:9000/'), { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true }).functionUrl).toBe('http://127.0.0.1:9000/');
  });
  it('names the bad field', () => {
    const bad = (spec: Record<string, unknown>) => () => parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, ...spec } as never });
    expect(bad({ for: { apiVersion: 'v1', kind: 'pod' } })).toThrow('Loop podset: spec.for.kind "pod" is not a Kind');
    expect(bad({ function: { url: 'nope' } })).toThrow('spec.function.url "nope" is not a URL');
    expect(bad({ serviceAccount: { namespace: 'Bad', name: 'x' } })).toThrow('spec.serviceAccount.namespace "Bad" is not a namespace name');
    expect(bad({ serviceAccount: { namespace: 'a', name: 7 } })).toThrow('spec.serviceAccount.name 7 is not a ServiceAccount name');
    expect(bad({ function: { url: 'http://fn.ns.svc/', timeoutSeconds: 0 } })).toThrow('spec.function.timeoutSeconds must be a number');
    // Capped: every call in flight holds a socket and up to one reply's memory.
    expect(bad({ function: { url: 'http://fn.ns.svc/', timeoutSeconds: 3600 } })).toThrow('spec.function.timeoutSeconds must be a number in (0, 60], got 3600');
    expect(bad({ function: { url: 'http://fn.ns.svc/', maxConcurrency: 1000 } })).toThrow('spec.function.maxConcurrency must be a number in (0, 64], got 1000');
    expect(bad({ owns: [{ apiVersion: 'v1' }] })).toThrow('spec.owns[0].kind');
    expect(bad({ selector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } })).toThrow('spec.selector');
    expect(bad({ namespaces: ['Bad_NS'] })).toThrow('spec.namespaces[0]');
    expect(bad({ function: { url: 'http://f.ns.svc/', signingSecretRef: { name: 'k' } } })).toThrow('spec.function.signingSecretRef.namespace must be a namespace name');
    expect(bad({ function: { url: 'http://f.ns.svc/', signingSecretRef: { name: 'k', namespace: 'ns', key: 3 } } })).toThrow('spec.function.signingSecretRef.key');
    expect(bad({ function: { url: 'http://f.ns.svc/', caBundle: 'eA==' } })).toThrow('spec.function.caBundle is only used with an https url');
    expect(bad({ function: { url: 'https://f.ns.svc/', caBundle: 'eA==' } })).toThrow('spec.function.caBundle must be base64 of PEM certificates');
  });
  it('reads the signing secret reference and decodes the CA bundle', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const ref = { name: 'podset-signing', namespace: 'kubeloop-system', key: 'secret' };
    const loop = parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, function: { url: 'https://f.ns.svc/', signingSecretRef: ref, caBundle: Buffer.from(pem).toString('base64') } } });
    expect(loop.signingSecretRef).toEqual(ref);
    expect(loop.caBundle).toBe(pem);
    expect(parseLoop(valid)).toMatchObject({ signingSecretRef: undefined, caBundle: undefined });
  });
  it('takes exactly one of function.url and function.ref', () => {
    const bad = (fn: Record<string, unknown>) => () => parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, function: fn } as never });
    const ref = { name: 'fn', namespace: 'fns', port: 8080 };
    expect(bad({ url: 'http://fn.ns.svc/', ref })).toThrow('spec.function must have exactly one of url and ref');
    expect(bad({})).toThrow('spec.function must have exactly one of url and ref');
    expect(bad({ ref: { ...ref, port: 0 } })).toThrow('spec.function.ref.port must be a port number');
    const loop = parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, function: { ref } } as never });
    expect(loop.functionUrl).toBeUndefined();
    expect(loop.functionRef).toEqual({ apiVersion: 'v1', kind: 'Service', name: 'fn', namespace: 'fns', port: 8080, path: '/' });
  });

  it('reads spec.related, and names the bad field of a related entry as an InvalidSpec', () => {
    const related = [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'kubeloop.dev/config-map' } }];
    expect(parseLoop({ ...valid, spec: { ...valid.spec, related } }).related).toMatchObject([{ name: 'config', kind: { apiVersion: 'v1', kind: 'ConfigMap' }, namespace: { from: 'primary' } }]);
    expect(parseLoop(valid).related).toEqual([]);
    let error: unknown;
    try {
      parseLoop({ ...valid, spec: { ...valid.spec, related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { fieldPath: 'spec.[' } }] } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LoopSpecError);
    expect((error as LoopSpecError).field).toBe('spec.related[0].nameFrom.fieldPath');
    expect(loopSpecErrorReason(error as LoopSpecError)).toBe('InvalidSpec');
  });

  it('batches calls by default, up to 16 per request; batch.enabled false or maxSize 1 turns it off', () => {
    const withBatch = (batch: unknown) => parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, function: { ...valid.spec.function, batch } } as never });
    expect(parseLoop(valid).batchMaxSize).toBe(16);
    expect(withBatch({ maxSize: 40 }).batchMaxSize).toBe(40);
    expect(withBatch({ enabled: false, maxSize: 40 }).batchMaxSize).toBe(1);
    expect(withBatch({ maxSize: 1 }).batchMaxSize).toBe(1);
    expect(() => withBatch({ maxSize: 65 })).toThrow('spec.function.batch.maxSize must be an integer in [1, 64], got 65');
    expect(() => withBatch({ maxSize: 2.5 })).toThrow('spec.function.batch.maxSize');
    expect(() => withBatch({ enabled: 'yes' })).toThrow('spec.function.batch.enabled must be true or false');
  });

  it('gathers only the calls of one event-loop turn by default; windowMs takes whole milliseconds from 0 to 100 and names a bad value', () => {
    const withBatch = (batch: unknown) => parseLoop({ metadata: valid.metadata, spec: { ...valid.spec, function: { ...valid.spec.function, batch } } as never });
    expect(parseLoop(valid).batchWindowMs).toBe(0);
    expect(withBatch({ windowMs: 0 }).batchWindowMs).toBe(0);
    expect(withBatch({ windowMs: 100 }).batchWindowMs).toBe(100);
    expect(() => withBatch({ windowMs: 101 })).toThrow('spec.function.batch.windowMs must be an integer number of milliseconds in [0, 100], got 101');
    expect(() => withBatch({ windowMs: -1 })).toThrow('spec.function.batch.windowMs');
    expect(() => withBatch({ windowMs: '5ms' })).toThrow('got "5ms"');
  });
});

describe("parseLoop: a function's shadow and canary", () => {
  const withFunction = (fn: Record<string, unknown>) => ({ ...valid, spec: { ...valid.spec, function: { ...valid.spec.function, ...fn } } });
  it('validates them as the function is, with their own defaults, and fingerprints the canary', () => {
    const loop = parseLoop(withFunction({ shadow: { url: 'http://next.kubeloop-system.svc/' }, canary: { url: 'http://canary.kubeloop-system.svc/', weight: 20, errorBudget: { ratio: 0.1, windowSeconds: 300 } } }));
    expect(loop.shadow).toMatchObject({ url: 'http://next.kubeloop-system.svc/', timeoutMs: 10_000, maxConcurrency: 4 });
    expect(loop.canary).toMatchObject({ weight: 20, maxConcurrency: 8, budget: { ratio: 0.1, maxErrors: undefined, windowMs: 300_000 } });
    expect(loop.canary?.fingerprint).toMatch(/^[0-9a-f]{12}$/);
    expect(parseLoop(valid)).toMatchObject({ shadow: undefined, canary: undefined });
  });
  it('names the bad field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ shadow: {} }, 'spec.function.shadow must have exactly one of url and ref'],
      [{ shadow: { url: 'http://127.0.0.1:1/' } }, 'spec.function.shadow.url "http://127.0.0.1:1/"'],
      [{ shadow: { ref: { name: 'fn', namespace: 'ns' } } }, 'spec.function.shadow.ref.port'],
      [{ canary: { url: 'http://c.ns.svc/', weight: 120, errorBudget: { maxErrors: 1, windowSeconds: 60 } } }, 'spec.function.canary.weight must be a percentage in [0, 100], got 120'],
      [{ canary: { url: 'http://c.ns.svc/', weight: 5 } }, 'spec.function.canary.errorBudget is required'],
      [{ canary: { url: 'http://c.ns.svc/', weight: 5, errorBudget: { windowSeconds: 60 } } }, 'spec.function.canary.errorBudget needs maxErrors or ratio'],
      [{ canary: { url: 'http://c.ns.svc/', weight: 5, errorBudget: { maxErrors: 1 } } }, 'spec.function.canary.errorBudget.windowSeconds'],
    ];
    for (const [fn, message] of cases) expect(() => parseLoop(withFunction(fn)), JSON.stringify(fn)).toThrow(message);
  });
});
