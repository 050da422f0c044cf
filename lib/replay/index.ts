// Recorded-event replay: load fixtures, POST them at a function, compare replies under the contract's ordering rules.
export * from './fixtures.ts';
export * from './compare-responses.ts';
export * from './replay-client.ts';
export { diffJson } from './json-diff.ts';
export * from './replay-files.ts';
