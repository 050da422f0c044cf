// What `kubeloop certs` prints for the Mutating- and ValidatingWebhookConfiguration of one name.
import { describe, expect, it } from 'vitest';
import { describeInjection, describeSync } from './certs-report.ts';

describe('describeInjection', () => {
  it('reports each kind, an absent one as normal', () => {
    expect(describeInjection('hooks', { MutatingWebhookConfiguration: 'not-found', ValidatingWebhookConfiguration: 'updated' })).toEqual([
      'caBundle of MutatingWebhookConfiguration hooks: absent (none of this kind)',
      'caBundle of ValidatingWebhookConfiguration hooks: updated',
    ]);
    expect(describeInjection('hooks', { MutatingWebhookConfiguration: 'updated', ValidatingWebhookConfiguration: 'unchanged' })).toEqual([
      'caBundle of MutatingWebhookConfiguration hooks: updated',
      'caBundle of ValidatingWebhookConfiguration hooks: unchanged',
    ]);
  });

  it('says not-found once when neither kind exists', () => {
    expect(describeInjection('hooks', { MutatingWebhookConfiguration: 'not-found', ValidatingWebhookConfiguration: 'not-found' })).toEqual([
      'caBundle of hooks: not-found (neither a MutatingWebhookConfiguration nor a ValidatingWebhookConfiguration named hooks)',
    ]);
  });
});

describe('describeSync', () => {
  it('tells an absent kind, a caBundle in sync and one that differs apart', () => {
    expect(describeSync('hooks', { MutatingWebhookConfiguration: 'differs', ValidatingWebhookConfiguration: 'absent' })).toEqual([
      'caBundle of MutatingWebhookConfiguration hooks: DIFFERS from the Secret (run kubeloop certs inject)',
      'caBundle of ValidatingWebhookConfiguration hooks: absent (none of this kind)',
    ]);
    expect(describeSync('hooks', { MutatingWebhookConfiguration: 'in-sync', ValidatingWebhookConfiguration: 'in-sync' })).toEqual([
      'caBundle of MutatingWebhookConfiguration hooks: in sync with the Secret',
      'caBundle of ValidatingWebhookConfiguration hooks: in sync with the Secret',
    ]);
    expect(describeSync('hooks', { MutatingWebhookConfiguration: 'absent', ValidatingWebhookConfiguration: 'absent' })).toEqual([
      'caBundle of hooks: not found (neither a MutatingWebhookConfiguration nor a ValidatingWebhookConfiguration named hooks)',
    ]);
  });
});
