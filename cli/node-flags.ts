// Node flags the built-in function images put on node's command line (the Dockerfile's ENTRYPOINTs; NODE_OPTIONS
// refuses them), written once here so that `kubeloop dev` starts its functions the same way; images.test.ts holds
// the Dockerfile to it.

/**
 * V8 compiles and collects on the main thread: a function's hot code is small, and optimising it on helper threads
 * cost ~20 MiB of peak RSS and more CPU per request, not less (docs/performance.md, "Function memory").
 */
export const FUNCTION_NODE_FLAGS: readonly string[] = ['--single-threaded'];
