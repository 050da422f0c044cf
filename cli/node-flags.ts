// Node flags the router and the built-in function images put on node's command line (the Dockerfile's ENTRYPOINTs;
// NODE_OPTIONS refuses them), written once here so that `kubeloop dev` starts them the same way; images.test.ts
// holds the Dockerfile to it.

/**
 * `--efficiency-mode`: V8's tiering and GC as for a background tab: TurboFan is put off (V8 says until 15,000
 * calls instead of 3,000, and no OSR from Maglev; on this Node a hot function stays with Maglev, node-flags.test.ts),
 * and the GC runs on the main thread instead of handing parts to a helper thread. A router's work comes in bursts
 * of a few thousand objects, in which TurboFan's compiles did not pay for themselves, in CPU or in their zones'
 * memory. Measured with 500 and 2,000 pods already there and created live: 9-15 MiB less peak RSS with pods already
 * there, 0.87-1.00x of the router's CPU per pod (docs/performance.md, "The router in V8's efficiency mode").
 *
 * `--no-allocation-site-pretenuring`: V8 notes, per place in the code that allocates, whether what it allocated
 * outlived a young-generation GC, and once nearly all of it has, allocates the rest there in the old generation
 * directly. A router opens its watches together, so their setup's objects (a stream's, its first tick's) all
 * survive, and from then on the same places put every bookmark's short-lived objects in the old generation too,
 * where only a full GC frees them: ~340 bytes per bookmark, ~28 without it (`bench:watch-wakeups`).
 */
export const ROUTER_NODE_FLAGS: readonly string[] = ['--efficiency-mode', '--no-allocation-site-pretenuring'];

/**
 * `--single-threaded`: V8 compiles and collects on the main thread: a function's hot code is small, and optimising
 * it on helper threads cost ~20 MiB of peak RSS and more CPU per request, not less. `--max-opt=2`: Maglev, V8's
 * mid-tier optimizing compiler, is the top tier; without TurboFan a function under load pages in ~5.5 MiB less
 * of the node binary's code and holds less optimized code, ~5-7 MiB off the peak for 3-6 % more CPU per request
 * at up to ~4,000 requests/s, 1.25x at saturation. `--no-sparkplug`: no baseline (Sparkplug) code for every
 * function that ran a few times, between the interpreter and Maglev: ~1.3 MiB off the peak at the same CPU per request,
 * as Maglev optimizes the hot path either way (docs/performance.md, "Function memory").
 */
export const FUNCTION_NODE_FLAGS: readonly string[] = ['--single-threaded', '--max-opt=2', '--no-sparkplug'];
