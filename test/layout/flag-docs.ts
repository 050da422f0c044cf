// Reads the flags the docs document for `kubeloop router` and `kubeloop webhook`: the rows of their flag tables
// (a "flag" and a "default" column) and the router's synopsis block, so flag-docs.test.ts can hold them to the code's tables.

export type Command = 'router' | 'webhook';

/** One documented flag: where, and the default the doc states (undefined: none stated; UNSET: "none", "off"...). */
export interface DocumentedFlag {
  file: string;
  line: number;
  command: Command;
  flag: string;
  documented?: string;
}

/** What the docs write for "no default": the flag is off or unset unless given. */
export const UNSET = '(unset)';
const UNSET_WORDS = new Set(['', 'none', 'off', 'all', 'in-cluster', 'the service', 'host name + pid', 'any the ca signed', 'all loops', 'unset']);

/** The sections of a page that document a command's flags: a heading starting so, up to the next heading. */
export interface PageSections {
  file: string;
  sections: Array<{ heading: string; command: Command }>;
}

/** Cells of a markdown table row, `\|` kept inside a cell. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** `--name` of each flag in a cell (`--flag VALUE`, `--flag=false`, several per cell). */
function flagsIn(cell: string): string[] {
  return [...cell.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? '');
}

/** A default as the doc writes it, normalised: no backticks, no explanation in parentheses, "none"/"off" → UNSET. */
export function normaliseDefault(raw: string): string {
  const value = raw.replace(/`/g, '').replace(/\s*\(.*\)\s*$/, '').trim();
  return UNSET_WORDS.has(value.toLowerCase()) ? UNSET : value;
}

/** Splits a default cell holding one value per flag: "8081, 0.0.0.0" (a comma inside parentheses kept). */
function splitDefaults(cell: string): string[] {
  return cell.split(/,\s+(?![^(]*\))/).map((v) => v.trim());
}

/** The documented flags of one section's lines (a flag table, a `kubeloop <command> [...]` synopsis). */
function readSection(file: string, lines: string[], first: number, command: Command, problems: string[]): DocumentedFlag[] {
  const found: DocumentedFlag[] = [];
  let flagColumn = -1;
  let defaultColumn = -1;
  let inSynopsis = false;
  lines.forEach((text, i) => {
    const line = first + i + 1;
    if (text.startsWith('```')) inSynopsis = false;
    if (text.startsWith(`kubeloop ${command} [`)) inSynopsis = true;
    if (inSynopsis) {
      // `[--flag VALUE]`: a value is a default unless it is a placeholder (PATH, NS, k=v,...) or an example list.
      for (const m of text.matchAll(/--([a-z][a-z0-9-]*)(?:[ =]([^\s\]|[]+))?/g)) {
        const value = m[2];
        const isDefault = value !== undefined && !/^[A-Z]|[=,]|\.\.\./.test(value) && !value.startsWith('--');
        found.push({ file, line, command, flag: m[1] ?? '', ...(isDefault ? { documented: value } : {}) });
      }
      return;
    }
    if (!text.startsWith('|')) {
      flagColumn = defaultColumn = -1;
      return;
    }
    const row = cells(text);
    if (flagColumn < 0) {
      const header = row.map((c) => c.toLowerCase());
      if (header[0] === 'flag') [flagColumn, defaultColumn] = [0, header.indexOf('default')];
      return;
    }
    if (/^[-|\s:]+$/.test(text)) return;
    const flags = flagsIn(row[flagColumn] ?? '');
    if (defaultColumn < 0) {
      for (const flag of flags) found.push({ file, line, command, flag });
      return;
    }
    const cell = row[defaultColumn] ?? '';
    const values = flags.length === 1 ? [cell] : splitDefaults(cell);
    if (cell !== '' && values.length !== flags.length) problems.push(`${file}:${line}: ${flags.length} flags but ${values.length} defaults ("${cell}"): write one default per flag, comma-separated`);
    flags.forEach((flag, k) => found.push({ file, line, command, flag, ...(cell === '' ? {} : { documented: normaliseDefault(values[k] ?? '') }) }));
  });
  return found;
}

/** Every documented flag of the pages' sections, and what could not be read (a row with too few defaults). */
export function readDocumentedFlags(page: PageSections, text: string): { flags: DocumentedFlag[]; problems: string[] } {
  const lines = text.split('\n');
  const flags: DocumentedFlag[] = [];
  const problems: string[] = [];
  for (const { heading, command } of page.sections) {
    const start = lines.findIndex((l) => l.startsWith(heading));
    if (start < 0) {
      problems.push(`${page.file}: no heading "${heading}"`);
      continue;
    }
    const rest = lines.slice(start + 1);
    const end = rest.findIndex((l) => /^#{1,6} /.test(l));
    flags.push(...readSection(page.file, end < 0 ? rest : rest.slice(0, end), start + 1, command, problems));
  }
  return { flags, problems };
}

/** The sections documenting each command's flags. */
export const PAGES: PageSections[] = [
  {
    file: 'README.md',
    sections: [
      { heading: '### Webhook: `kubeloop webhook`', command: 'webhook' },
      { heading: '### Router: `kubeloop router`', command: 'router' },
    ],
  },
  { file: 'docs/webhook.md', sections: [{ heading: '## Configuration', command: 'webhook' }] },
  { file: 'docs/router.md', sections: [{ heading: '## Running it', command: 'router' }] },
  {
    file: 'docs/observability.md',
    sections: [
      { heading: '## The admission history API', command: 'webhook' },
      { heading: '## A longer past: rotated history files', command: 'router' },
    ],
  },
];

/** docs/router.md is about the router alone: every `--flag` in it must be the router's, but these other programs'. */
export const FOREIGN_IN_ROUTER_DOC = new Set(['goaway-chance' /* kube-apiserver's */, 'project' /* vitest's */]);
