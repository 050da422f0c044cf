// The fenced code blocks of a Markdown page, for the tests that hold the docs to what they show (the ```ts
// snippets type-checked, the ```sh lines run): a marker on the line above a fence says what the block is.
export interface Snippet {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The marker's text ("partial (why)", "file=src/index.ts", "newcomer"), '' without one. */
  marker: string;
  file?: string;
  partial: boolean;
}

/** The ```<language> blocks of a Markdown page (indented ones too) with the marker on the line above each. */
export function extractSnippets(page: string, text: string, language = 'ts'): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = new RegExp(`^(\\s*)\`\`\`${language}\\s*$`).exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1] ?? '';
    const marker = /<!--\s*snippet:\s*(.*?)\s*-->/.exec(lines[i - 1] ?? '')?.[1] ?? '';
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && (lines[j] ?? '').trim() !== '```'; j++) body.push((lines[j] ?? '').slice(indent.length));
    const file = /file=(\S+)/.exec(marker)?.[1];
    snippets.push({ page, line: i + 1, code: `${body.join('\n')}\n`, marker, ...(file ? { file } : {}), partial: marker.startsWith('partial') });
    i = j;
  }
  return snippets;
}

