// Replays every fixture of some files or folders against one function URL: the loop behind `kubeloop
// replay` and the package's testing helpers, one result per file (an unreadable file is a result too).
import { loadFixtures, type Fixture } from './fixtures.ts';
import { replayFixture, type ReplayOptions, type ReplayResult } from './replay-client.ts';

export type FileReplayResult =
  | { file: string; outcome: 'invalid'; message: string }
  | ({ file: string; fixture: Fixture } & ReplayResult);

/** One case per fixture file; a folder without fixtures is reported as invalid rather than passing silently. */
export async function replayFiles(targets: string[], options: ReplayOptions): Promise<FileReplayResult[]> {
  const results: FileReplayResult[] = [];
  for (const target of targets) {
    let loaded;
    try {
      loaded = loadFixtures(target);
    } catch (error) {
      results.push({ file: target, outcome: 'invalid', message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    if (loaded.length === 0) results.push({ file: target, outcome: 'invalid', message: 'no *.json fixtures in this folder' });
    for (const one of loaded) {
      if (!one.ok) {
        results.push({ file: one.file, outcome: 'invalid', message: `invalid fixture: ${one.error}` });
        continue;
      }
      results.push({ file: one.file, fixture: one.fixture, ...(await replayFixture(one.fixture, options)) });
    }
  }
  return results;
}

