// Public surface of the router: start it, describe Loops, plug in an invoker, read its metrics.
export { startRouter, type Router, type RouterOptions, type LeaderElectionConfig } from './start-router.ts';
export { parseLoop, LoopSpecError, type LoopConfig } from './base/loop-spec.ts';
export { createHttpInvoker, type DispatchResult, type FunctionInvoker } from './reconcile/dispatch.ts';
export { createRouterMetrics, type RouterMetrics } from './base/router-metrics.ts';
export { readRouterConfig, ROUTER_USAGE, type RouterConfig } from './router-config.ts';
