// When the writer applies a configuration again: never for its own write's watch event, always after someone
// else's edit or deletion, and after an event that came while its apply was under way (it may be someone else's).
// The API server here answers the applies only; the e2e of the watch is test/e2e/tenant-hook-rules.test.ts.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { KubeClient, KubeRequest } from '../../lib/kube/kube-client.ts';
import type { ConfigurationPair } from './hook-configuration-shards.ts';
import { ConfigurationWriter } from './hook-configuration-writer.ts';

const NAME = 'kubeloop-admission-hooks';
const pair: ConfigurationPair = {
  name: NAME,
  mutating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: NAME }, webhooks: [] },
  validating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: NAME }, webhooks: [] },
};

/** Counts the applies per type; each answers a new resourceVersion, after `during` ran (an event meanwhile). */
function writerOnApi() {
  const applies: string[] = [];
  let version = 0;
  let during: (() => void) | undefined;
  const request = async ({ path }: KubeRequest) => {
    applies.push(path.includes('/mutating') ? 'mutating' : 'validating');
    during?.();
    during = undefined;
    return { metadata: { resourceVersion: String(++version) } };
  };
  const writer = new ConfigurationWriter({ client: { request } as unknown as KubeClient, logger: pino({ level: 'silent' }), clusterName: NAME });
  return { writer, applies, version: () => String(version), meanwhile: (run: () => void) => (during = run) };
}

describe('ConfigurationWriter.changed', () => {
  it("ignores its own write's event: an unchanged configuration is not applied again", async () => {
    const { writer, applies, version } = writerOnApi();
    await writer.apply([pair]);
    expect(writer.changed('validating', NAME, version())).toBe(false);
    await writer.apply([pair]);
    expect(applies).toEqual(['mutating', 'validating']);
  });

  it("applies again after someone else's edit or deletion, that configuration only", async () => {
    const { writer, applies } = writerOnApi();
    await writer.apply([pair]);
    expect(writer.changed('validating', NAME, '99')).toBe(true);
    await writer.apply([pair]);
    expect(writer.changed('mutating', NAME, undefined)).toBe(true);
    await writer.apply([pair]);
    expect(applies).toEqual(['mutating', 'validating', 'validating', 'mutating']);
  });

  it('applies again after an event that came while its apply was under way', async () => {
    const { writer, applies, meanwhile } = writerOnApi();
    let told: boolean | undefined;
    meanwhile(() => (told = writer.changed('mutating', NAME, '42')));
    await writer.apply([pair]);
    expect(told).toBe(true);
    await writer.apply([pair]);
    expect(applies).toEqual(['mutating', 'validating', 'mutating']);
  });

  it('is told nothing of configurations it never applied, or after forgetting', async () => {
    const { writer } = writerOnApi();
    expect(writer.changed('validating', 'someone-elses', '1')).toBe(false);
    await writer.apply([pair]);
    writer.forget();
    expect(writer.changed('validating', NAME, '7')).toBe(false);
  });
});
