// kubeloop's API types: the CRDs in charts/kubeloop/crds/ as TypeScript, with their constants.
export * from './meta.ts';
export * from './loop.ts';
export * from './podset.ts';
export * from './watcher.ts';
export * from './at.ts';
export * from './admission-hook.ts';
