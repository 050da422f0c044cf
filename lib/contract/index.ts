// Public surface of the contract.
export * from './types.ts';
export * from './schemas.ts';
export * from './validate.ts';
export * from './children-key.ts';
