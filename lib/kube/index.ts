// Kubernetes helpers shared by the router and the webhook.
export * from './backoff.ts';
export * from './transient.ts';
export * from './rate-limiter.ts';
export * from './kube-config.ts';
export * from './kube-client.ts';
export * from './resource-paths.ts';
export * from './object-meta.ts';
export * from './discovery.ts';
export * from './object-store.ts';
export * from './label-selector.ts';
export * from './watch-stream.ts';
export * from './list-all.ts';
export * from './informer.ts';
export * from './named-object-watch.ts';
