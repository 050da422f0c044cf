// admissionRequestFor: requests the contract accepts, shaped per operation as the gateway sends them.
import { describe, expect, it } from 'vitest';
import { validateAdmissionRequest } from '../contract/validate.ts';
import { admissionRequestFor } from './admission-requests.ts';

const policy = { apiVersion: 'example.com/v1', kind: 'Policy', metadata: { name: 'p', namespace: 'shop' } };

describe('admissionRequestFor', () => {
  it('builds a valid CREATE with the group, version and usual plural of the kind', () => {
    const request = admissionRequestFor(policy);
    expect(validateAdmissionRequest(request).ok).toBe(true);
    expect(request).toMatchObject({ operation: 'CREATE', name: 'p', namespace: 'shop', object: policy, requestKind: { group: 'example.com', version: 'v1', kind: 'Policy' }, resource: { resource: 'policies' }, options: { kind: 'CreateOptions' } });
    expect(request.oldObject).toBeUndefined();
  });

  it('sends the stored object on UPDATE and only the stored object on DELETE', () => {
    const old = { ...policy, metadata: { ...policy.metadata, labels: { a: 'b' } } };
    expect(admissionRequestFor(policy, { operation: 'UPDATE', oldObject: old })).toMatchObject({ object: policy, oldObject: old, options: { kind: 'UpdateOptions' } });
    const deleted = admissionRequestFor(policy, { operation: 'DELETE', dryRun: true });
    expect(validateAdmissionRequest(deleted).ok).toBe(true);
    expect(deleted.object).toBeUndefined();
    expect(deleted).toMatchObject({ oldObject: policy, dryRun: true, options: { kind: 'DeleteOptions' } });
  });
});
