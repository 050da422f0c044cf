// Public surface of the contract.
export * from './types.ts';
export * from './admission-types.ts';
export * from './admission-schemas.ts';
export * from './schemas.ts';
export * from './validate.ts';
export * from './children-key.ts';
export * from './batch.ts';
