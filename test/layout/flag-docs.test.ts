// The flag tables in README.md and docs/ are written by hand: this holds every documented default of
// `kubeloop router` and `kubeloop webhook` to the one default in their flag tables, and every flag to being documented.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTER_DEFAULTS, ROUTER_FLAG_OPTIONS, ROUTER_RANGES, ROUTER_SWITCHES } from '../../router/router-flags.ts';
import { WEBHOOK_FLAG_OPTIONS, WEBHOOK_FLAGS, type WebhookFlag } from '../../webhooks/webhook-flags.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../../lib/config/function-url-policy.ts';
import { DEFAULT_TRACE_SAMPLING_RATIO } from '../../lib/server/server-settings.ts';
import { FOREIGN_IN_ROUTER_DOC, PAGES, readDocumentedFlags, UNSET, type Command, type DocumentedFlag } from './flag-docs.ts';

const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** Each command's flags and their one default (undefined: none, the flag is off or unset unless given). */
const TABLES: Record<Command, { options: Record<string, unknown>; defaults: Map<string, string> }> = {
  router: {
    options: ROUTER_FLAG_OPTIONS,
    defaults: new Map(
      [...Object.entries(ROUTER_RANGES), ...Object.entries(ROUTER_SWITCHES)]
        .map(([flag, entry]): [string, string] => [flag, String(entry.default)])
        .concat(Object.entries(ROUTER_DEFAULTS).map(([flag, value]): [string, string] => [flag, String(value)]), [['cluster-domain', DEFAULT_FUNCTION_URL_POLICY.clusterDomain]]),
    ),
  },
  webhook: {
    options: WEBHOOK_FLAG_OPTIONS,
    defaults: new Map(
      Object.entries(WEBHOOK_FLAGS)
        .flatMap(([flag, entry]: [string, WebhookFlag]): Array<[string, string]> => ('default' in entry && entry.default !== undefined ? [[flag, String(entry.default)]] : []))
        .concat([
          ['cluster-domain', DEFAULT_FUNCTION_URL_POLICY.clusterDomain],
          ['trace-sampling-ratio', String(DEFAULT_TRACE_SAMPLING_RATIO)],
        ]),
    ),
  },
};

/** What is wrong with one documented flag, or undefined: it exists and its documented default is the table's. */
function driftOf(doc: DocumentedFlag): string | undefined {
  const table = TABLES[doc.command];
  const where = `${doc.file}:${doc.line}: kubeloop ${doc.command} --${doc.flag}`;
  if (!(doc.flag in table.options)) return `${where} is documented but is no flag of kubeloop ${doc.command}`;
  if (doc.documented === undefined) return undefined;
  const actual = table.defaults.get(doc.flag) ?? UNSET;
  return doc.documented === actual ? undefined : `${where}: documented default "${doc.documented}", the flag table's "${actual}"`;
}

function documentedFlags(): { flags: DocumentedFlag[]; problems: string[] } {
  const all = PAGES.map((page) => readDocumentedFlags(page, read(page.file)));
  return { flags: all.flatMap((r) => r.flags), problems: all.flatMap((r) => r.problems) };
}

describe('the documented flags of kubeloop router and kubeloop webhook', () => {
  it('are read from every page: each section found, each table row with one default per flag', () => {
    const { flags, problems } = documentedFlags();
    expect(problems).toEqual([]);
    for (const command of ['router', 'webhook'] as const) expect(flags.filter((f) => f.command === command && f.documented !== undefined).length, command).toBeGreaterThan(20);
  });

  it("state each flag's default as its flag table does, and name only flags that exist", () => {
    expect(documentedFlags().flags.map(driftOf).filter(Boolean)).toEqual([]);
  });

  it('document every flag of each table somewhere', () => {
    const missing = (['router', 'webhook'] as const).flatMap((command) => {
      const files = PAGES.filter((p) => p.sections.some((s) => s.command === command)).map((p) => p.file);
      const text = files.map(read).join('\n');
      return Object.keys(TABLES[command].options)
        .filter((flag) => !new RegExp(`--${flag}(?![a-z0-9-])`).test(text))
        .map((flag) => `kubeloop ${command} --${flag} is documented nowhere (${files.join(', ')})`);
    });
    expect(missing).toEqual([]);
  });

  it("list every flag of the webhook in docs/webhook.md's table, which says it holds them all", () => {
    const listed = new Set(documentedFlags().flags.filter((f) => f.file === 'docs/webhook.md').map((f) => f.flag));
    expect(Object.keys(WEBHOOK_FLAG_OPTIONS).filter((flag) => !listed.has(flag)).map((flag) => `docs/webhook.md: kubeloop webhook --${flag} is not in the flag table`)).toEqual([]);
  });

  it('docs/router.md names only flags the router has (or another program, named here)', () => {
    const unknown = [...read('docs/router.md').matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? '').filter((flag) => !(flag in ROUTER_FLAG_OPTIONS) && !FOREIGN_IN_ROUTER_DOC.has(flag));
    expect([...new Set(unknown)].map((flag) => `docs/router.md: --${flag} is no flag of kubeloop router`)).toEqual([]);
  });
});
