// defineFunction and defineAdmission say what they take when given something else.
import { describe, expect, it } from 'vitest';
import { defineAdmission } from './define-admission.ts';
import { defineFunction, type FunctionDefinition } from './define-function.ts';

describe('defineFunction / defineAdmission', () => {
  it('names { name, reconcile } and what was given instead', () => {
    expect(() => defineFunction({ reconcile: () => ({ actions: [] }) } as unknown as FunctionDefinition)).toThrow(/function name null must be a DNS label .*; defineFunction takes \{ name, reconcile \}/);
    expect(() => defineFunction({ name: 'x', reconcil: () => ({}) } as unknown as FunctionDefinition)).toThrow('defineFunction takes { name, reconcile }');
    expect(() => defineFunction({ name: 'x', reconcil: () => ({}) } as unknown as FunctionDefinition)).toThrow('got { name, reconcil }');
    expect(() => defineFunction({ name: 'Bad_Name', reconcile: () => ({ actions: [] }) } as never)).toThrow(/function name "Bad_Name" must be a DNS label/);
    expect(defineFunction({ name: 'ok', reconcile: () => ({ actions: [] }) } as never).name).toBe('ok');
  });

  it('names { name, type, admit } for an admission function', () => {
    expect(() => defineAdmission({ name: 'x', type: 'validating' } as never)).toThrow("defineAdmission takes { name, type, admit }: a DNS-label name, type 'validating' or 'mutating', and admit(request) => response; got { name, type }");
  });
});
