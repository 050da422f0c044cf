// The webhook's flag table: every flag parses, each default is written once (in the table) and shown by --help,
// and what config.ts reads when nothing is set is the table's default.
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { readWebhookConfig } from './config.ts';
import { WEBHOOK_FLAG_OPTIONS, WEBHOOK_FLAGS, WEBHOOK_USAGE, type WebhookFlag } from './webhook-flags.ts';

const FLAGS = Object.entries(WEBHOOK_FLAGS) as Array<[string, WebhookFlag]>;

/** A value each flag accepts (the smallest in range, a path, the first choice). */
function acceptedValue(name: string, flag: WebhookFlag): string[] {
  switch (flag.type) {
    case 'boolean':
      return [`--${name}`];
    case 'integer':
      return [`--${name}`, String(Math.max(flag.min, flag.default ?? flag.min))];
    case 'choice':
      return [`--${name}`, flag.default];
    default:
      return [`--${name}`, name === 'advertise-url' ? 'https://10.0.0.5:8443' : name === 'connect-services-to' ? '127.0.0.1' : name === 'hook-allow-resources' ? 'secrets' : name === 'deny-function-network' ? '10.0.0.0/8' : name === 'deny-loopback-port' ? '2379' : name === 'log-level' ? 'debug' : name === 'hook-exclude-identities' ? 'system:kube-scheduler' : 'x'];
  }
}

/** Flags that need a companion to be read on their own. */
const COMPANIONS: Record<string, string[]> = {
  'client-name': ['--client-ca-file', '/ca.crt'],
  'admission-history-api-port': ['--admission-history-tls-cert-file', '/c', '--admission-history-tls-key-file', '/k'],
  'tls-cert-file': ['--certificates', 'files', '--tls-key-file', '/k'],
  'tls-key-file': ['--certificates', 'files', '--tls-cert-file', '/c'],
};

describe('the webhook flag table', () => {
  it.each(FLAGS)('--%s parses, is in parseArgs options and --help with its variables and default', (name, flag) => {
    expect(WEBHOOK_FLAG_OPTIONS).toHaveProperty([name]);
    expect(() => readWebhookConfig([...acceptedValue(name, flag), ...(COMPANIONS[name] ?? [])], {})).not.toThrow();
    const line = WEBHOOK_USAGE.split('\n').find((l) => l.startsWith(`  --${name} `) || l === `  --${name}` || l.startsWith(`  --${name}  `));
    expect(line, name).toBeDefined();
    for (const variable of flag.env ?? []) expect(line).toContain(variable);
    if ('default' in flag && flag.default !== undefined) expect(line).toContain(`--${name} ${flag.type === 'choice' ? flag.choices.join('|') : flag.default}`);
    if (flag.type === 'integer') {
      if (flag.default !== undefined) expect(flag.default).toBeGreaterThanOrEqual(flag.min);
      if (flag.default !== undefined) expect(flag.default).toBeLessThanOrEqual(flag.max);
      expect(() => readWebhookConfig([`--${name}`, String(flag.max + 1), ...(COMPANIONS[name] ?? [])], {})).toThrow(`--${name}: "${flag.max + 1}" is not an integer between ${flag.min} and ${flag.max}`);
    }
  });

  it("reads each integer's and text's default from the table when nothing is set", () => {
    const config = readWebhookConfig([], {});
    const { port, 'ops-port': ops, namespace, service, secret, 'hook-configuration': hookConfiguration, 'tenant-max-hooks': tenantMaxHooks, 'admission-history-per-hook': perHook } = WEBHOOK_FLAGS;
    expect(config).toMatchObject({ port: port.default, opsPort: ops.default, namespace: namespace.default, service: service.default, secretName: secret.default, hookConfigurationName: hookConfiguration.default });
    expect(config.tenantHooks.tenantMaxHooks).toBe(tenantMaxHooks.default);
    expect(config.admissionHistory).toMatchObject({ perHook: perHook.default });
    expect(config.admissionHistory.api).toBeUndefined();
  });

  it('writes no default of its own in config.ts and the settings files: every one comes from the table', async () => {
    for (const file of ['config.ts', 'tenant-hook-settings.ts', 'admission-history-settings.ts']) {
      const source = await readFile(new URL(file, import.meta.url), 'utf8');
      expect(source, file).not.toMatch(/DEFAULT_[A-Z_]+/);
      expect(source, file).not.toMatch(/settingInteger\(|pickSetting\(/);
    }
  });
});
