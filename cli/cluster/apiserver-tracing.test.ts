import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { tracingConfiguration } from './apiserver-tracing.ts';

describe('kube-apiserver tracing configuration', () => {
  it('is a v1 TracingConfiguration exporting every request to the collector', () => {
    expect(parse(tracingConfiguration({ otlpGrpcEndpoint: '127.0.0.1:4317' }))).toEqual({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'TracingConfiguration',
      endpoint: '127.0.0.1:4317',
      samplingRatePerMillion: 1_000_000,
    });
  });
});
