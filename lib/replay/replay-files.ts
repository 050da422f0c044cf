// Replays every fixture of some files or folders against one function URL: the loop behind `kubeloop
// replay` and the package's testing helpers, one result per file (an unreadable file is a result too).
import { loadFixtures, type Fixture, type UnrecordedFixture } from './fixtures.ts';
import { callFunction, judgeReply, replayFixture, type CallResult, type ReplayOptions, type ReplayResult } from './replay-client.ts';
import { callBatched } from './replay-batch.ts';
import type { ReconcileRequest } from '../contract/types.ts';

export type FileReplayResult =
  | { file: string; outcome: 'invalid'; message: string }
  /** A request without a recorded response: what the function answered, for `kubeloop replay --update`. */
  | { file: string; outcome: 'unrecorded'; fixture: UnrecordedFixture; reply: CallResult }
  | ({ file: string; fixture: Fixture } & ReplayResult);

export interface FileReplayOptions extends ReplayOptions {
  /** Called with each case as soon as it is done (progress), before the next one starts. */
  onResult?: (result: FileReplayResult) => void;
}

/** One case per fixture file; a folder without fixtures is reported as invalid rather than passing silently. */
export async function replayFiles(targets: string[], options: FileReplayOptions): Promise<FileReplayResult[]> {
  const results: FileReplayResult[] = [];
  const push = (result: FileReplayResult): void => {
    results.push(result);
    options.onResult?.(result);
  };
  for (const target of targets) {
    let loaded;
    try {
      loaded = loadFixtures(target);
    } catch (error) {
      push({ file: target, outcome: 'invalid', message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    if (loaded.length === 0) push({ file: target, outcome: 'invalid', message: 'no *.json fixtures in this folder' });
    const batched = await batchedReplies(loaded, options);
    for (const one of loaded) {
      if (!one.ok) {
        const request = one.unrecorded?.request;
        if (one.unrecorded) push({ file: one.file, outcome: 'unrecorded', fixture: one.unrecorded, reply: batched.get(request!) ?? (await callFunction(one.unrecorded.request, options)) });
        else push({ file: one.file, outcome: 'invalid', message: `invalid fixture: ${one.error}` });
        continue;
      }
      const reply = batched.get(one.fixture.request);
      push({ file: one.file, fixture: one.fixture, ...(reply ? judgeReply(one.fixture, reply, options) : await replayFixture(one.fixture, options)) });
    }
  }
  return results;
}


/** In a batch mode, the replies to a target's reconcile requests, sent together; empty otherwise. */
async function batchedReplies(loaded: ReturnType<typeof loadFixtures>, options: ReplayOptions): Promise<Map<unknown, CallResult>> {
  if (options.mode !== 'batch-json' && options.mode !== 'batch-cloudevents') return new Map();
  const requests = loaded.map((one) => (one.ok ? one.fixture.request : one.unrecorded?.request)).filter((r): r is ReconcileRequest => r?.kind === 'ReconcileRequest');
  if (requests.length === 0) return new Map();
  const replies = await callBatched(requests, options);
  return new Map(requests.map((request, i) => [request, replies[i]!]));
}
