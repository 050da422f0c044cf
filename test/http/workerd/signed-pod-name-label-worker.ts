// Worker entry for the signed half of test/http/workerd-fetch-handler.test.ts: pod-name-label verifying
// requests and signing replies with Web Crypto, its key from a secret binding as Workers deliver secrets.
import { toFetchHandler } from '../../../lib/runtime/fetch-handler.ts';
import { podNameLabel } from './pod-name-label-definition.ts';

interface Env {
  KUBELOOP_SIGNING_SECRET: string;
}

let handler: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    // Bindings arrive with the first request, so the handler is built then.
    handler ??= toFetchHandler(podNameLabel, { logLevel: 'warn', signingSecret: env.KUBELOOP_SIGNING_SECRET });
    return handler(request);
  },
};
