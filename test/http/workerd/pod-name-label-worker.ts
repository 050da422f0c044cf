// Worker entry for test/http/workerd-fetch-handler.test.ts: pod-name-label behind toFetchHandler, as a
// Cloudflare Workers deployment would export it, plus one probe showing the runtime forbids `new Function`.
import { toFetchHandler } from '../../../lib/runtime/fetch-handler.ts';
import { podNameLabel } from './pod-name-label-definition.ts';

const handler = toFetchHandler(podNameLabel, { logLevel: 'warn' });

/** Answers whether `new Function` runs here (workerd-fetch-handler.test.ts asks it). */
const CODEGEN_PROBE_PATH = '/__probe/codegen';

// Only handlers may be exported: workerd treats every export as an entry point.
export default {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== CODEGEN_PROBE_PATH) return handler(request);
    try {
      // What ajv's compile() does; precompiled validators never need it.
      return new Response(`allowed: ${String(new Function('return 1')())}`);
    } catch (error) {
      return new Response(`refused: ${(error as Error).message}`);
    }
  },
};
