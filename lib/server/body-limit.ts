// The default request body limit, in a module of its own so the portable fetch handler can read it
// without loading fastify.

/** 8 MiB: an admission review or reconcile request with old and new objects or many children fits. */
export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
