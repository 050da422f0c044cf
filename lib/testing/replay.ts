// Replays recorded fixtures against a function definition in-process, for a function project's own tests
// (`kubeloop init` writes one): serves it on a free port, POSTs every case, closes it again.
import type { AnyFunctionDefinition } from '../runtime/function-kinds.ts';
import { formatDifferences } from '../replay/compare-responses.ts';
import { replayFiles, type FileReplayResult } from '../replay/replay-files.ts';
import type { ReplayMode } from '../replay/replay-client.ts';
import { serveForTest } from './serve.ts';

export async function replayFixtures(
  definition: AnyFunctionDefinition,
  filesOrFolders: string | string[],
  options: { mode?: ReplayMode; timeoutMs?: number } = {},
): Promise<FileReplayResult[]> {
  const server = await serveForTest(definition);
  try {
    return await replayFiles(Array.isArray(filesOrFolders) ? filesOrFolders : [filesOrFolders], { url: `${server.url}/`, ...options });
  } finally {
    await server.close();
  }
}

function failureDetail(result: Exclude<FileReplayResult, { outcome: 'pass' }>): string {
  if (result.outcome === 'mismatch') return formatDifferences(result.differences);
  if (result.outcome === 'unrecorded') return `    no recorded response: run \`npx kubeloop replay ${result.file} --function ./src/index.ts --update\` to record the reply`;
  return `    ${result.message}`;
}

/** One line per failed case with its differences; '' when every case passed. */
export function describeFailures(results: FileReplayResult[]): string {
  return results
    .filter((r): r is Exclude<FileReplayResult, { outcome: 'pass' }> => r.outcome !== 'pass')
    .map((r) => `${r.file}\n${failureDetail(r)}`)
    .join('\n');
}
