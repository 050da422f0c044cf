// What a reconcile function imports: the contract types, defineFunction and the action helpers.
export * from '../contract/types.ts';
export * from '../contract/admission-types.ts';
export { childrenKey } from '../contract/children-key.ts';
export * from './define-function.ts';
export * from './define-admission.ts';
export { allow, allowWithPatch, deny, mutate, type ReplyExtras } from './admission.ts';
export * from './actions.ts';
export * from './conditions.ts';
export { cloneJson } from './clone-json.ts';
export { isRelatedSent, relatedNamed, relatedOf, requires } from './related.ts';
export { traceAttributes, traceEvent } from '../observability/function-span.ts';
