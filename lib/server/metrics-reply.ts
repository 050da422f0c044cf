// GET and HEAD /metrics on node:http: the page written out a chunk at a time as it is rendered, never held whole
// (metrics-text.ts), with the write side's back-pressure kept: a slow scraper holds the rendering, not a copy.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.ts';
import type { MetricsView } from '../observability/metrics.ts';
import { failedRequestBody, jsonReply } from '../runtime/http-replies.ts';
import { sendReply } from './node-server.ts';

/** Resolves when the response can take more, or is gone (the scraper hung up). */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Sends the metrics page. When its first chunk cannot be rendered nothing was sent yet: the answer is the fastify
 * bootstrap's 500 (failedRequestBody). A family failing after the status went out ends the
 * connection instead, so a scraper never takes a cut page as whole.
 */
export function serveMetrics(response: ServerResponse, view: MetricsView, head: boolean, logger: Logger): void {
  sendPage(response, view, head, logger).catch((error: unknown) => sendReply(response, jsonReply(500, failedRequestBody(logger, error))));
}

async function sendPage(response: ServerResponse, view: MetricsView, head: boolean, logger: Logger): Promise<void> {
  // A HEAD request gets the GET answer's status and headers; the page is not rendered for it.
  if (head) {
    response.writeHead(200, { 'content-type': view.contentType }).end();
    return;
  }
  const page = await view.page();
  response.writeHead(200, { 'content-type': view.contentType });
  try {
    for await (const chunk of page) {
      if (response.destroyed) return;
      if (!response.write(chunk)) await drained(response);
    }
    response.end();
  } catch (error) {
    logger.error({ err: error }, 'the metrics page failed after its status was sent');
    response.destroy();
  }
}
