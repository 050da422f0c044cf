// A bench baseline: an HTTPS route that does the gateway's work for one hook minus the hop to the
// function (convert the review, decide in-process, convert back), shared by the bench servers.
import type { FastifyInstance } from 'fastify';
import type { KubeObject } from '../api/meta.ts';
import type { Admit } from '../lib/sdk/define-admission.ts';
import { MalformedReviewError, parseAdmissionReview, reviewResponse, toFunctionRequest, toReviewResponse, type ResolvedHook } from '../webhooks/index.ts';

export function directAdmissionRoute(
  app: FastifyInstance,
  path: string,
  hook: ResolvedHook,
  admit: Admit,
  context: (namespace: string | undefined) => Record<string, KubeObject | null> = () => ({}),
): void {
  app.post(path, async (request, reply) => {
    let review;
    try {
      review = parseAdmissionReview(request.body);
    } catch (error) {
      if (error instanceof MalformedReviewError) return reply.code(400).send({ message: error.message });
      throw error;
    }
    const functionRequest = toFunctionRequest(review, hook, context(review.namespace), new Date());
    const converted = toReviewResponse(admit(functionRequest), hook, functionRequest);
    if (!converted.ok) throw new Error(converted.failure.message);
    return reviewResponse(converted.response);
  });
}
