import { describe, expect, it } from 'vitest';
import { readTracingSettings } from '../server/server-settings.ts';
import { parseOtlpHeaders, startTracing, tracesUrl } from './tracing.ts';

describe('tracing settings', () => {
  it('is off without an endpoint, and then loads no SDK', async () => {
    const settings = readTracingSettings({}, {});
    expect(settings.otlpEndpoint).toBeUndefined();
    expect((await startTracing(settings, 'x')).enabled).toBe(false);
  });

  it('reads the standard OTLP variables and kubeloop sampling ratio; flags win', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc,x-team=a', KUBELOOP_TRACE_SAMPLING_RATIO: '0.1' };
    expect(readTracingSettings({}, env)).toEqual({ otlpEndpoint: 'http://jaeger:4318', otlpHeaders: { authorization: 'Bearer abc', 'x-team': 'a' }, samplingRatio: 0.1 });
    expect(readTracingSettings({ 'trace-sampling-ratio': '1' }, env).samplingRatio).toBe(1);
  });

  it('names the bad setting', () => {
    expect(() => readTracingSettings({ 'trace-sampling-ratio': '2' }, {})).toThrow(/--trace-sampling-ratio: "2" is not a number between 0 and 1/);
    expect(() => readTracingSettings({ 'otlp-endpoint': 'jaeger:4318' }, {})).toThrow(/--otlp-endpoint: "jaeger:4318" is not an http\(s\) URL/);
    expect(() => parseOtlpHeaders('novalue', 'OTEL_EXPORTER_OTLP_HEADERS')).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value/);
  });

  it('sends to <endpoint>/v1/traces unless the URL names it already', () => {
    expect(tracesUrl('http://jaeger:4318/')).toBe('http://jaeger:4318/v1/traces');
    expect(tracesUrl('https://otlp.example/v1/traces')).toBe('https://otlp.example/v1/traces');
  });
});
