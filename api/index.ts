// kubeloop's API types: the chart's CRDs (charts/kubeloop/charts/crds/crds/, files/crds/) as TypeScript, with their constants.
export * from './meta.ts';
export * from './loop.ts';
export * from './podset.ts';
export * from './watcher.ts';
export * from './at.ts';
export * from './admission-hook.ts';
export * from './tenant.ts';
