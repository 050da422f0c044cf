import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeWatchEvent, MAX_FRAME_BYTES, ProtobufWatchDecoder } from './protobuf-watch-stream.ts';
import { decodeEnvelopedObject } from './protobuf-object.ts';
import { watchErrorEvent, WatchGoneError } from './watch-errors.ts';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { enveloped, objectMeta, partialObjectMetadata, status, watchFrame, type MetaInput } from '../../test/support/protobuf-watch-frames.ts';

const POD: MetaInput = {
  name: 'web-7d4b9-x2x9q',
  generateName: 'web-7d4b9-',
  namespace: 'team-a',
  uid: '3f1c2e9a-1b7d-4c55-9f0e-2d6a8b1c0e11',
  resourceVersion: '48213',
  creationSeconds: Date.UTC(2026, 10, 29, 20, 1, 2) / 1000,
  labels: { app: 'web', 'pod-template-hash': '7d4b9' },
  annotations: { 'kubeloop.dev/note': 'grüß dich' },
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9', uid: '0b9e', controller: true, blockOwnerDeletion: true }],
  finalizers: ['kubeloop.dev/cleanup'],
  managedFieldsBytes: 1500,
};

/** The object the API server's JSON gives for POD as PartialObjectMetadata (managedFields left out). */
const POD_JSON = {
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: {
    name: 'web-7d4b9-x2x9q',
    generateName: 'web-7d4b9-',
    namespace: 'team-a',
    uid: '3f1c2e9a-1b7d-4c55-9f0e-2d6a8b1c0e11',
    resourceVersion: '48213',
    creationTimestamp: '2026-11-29T20:01:02Z',
    labels: { app: 'web', 'pod-template-hash': '7d4b9' },
    annotations: { 'kubeloop.dev/note': 'grüß dich' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9', uid: '0b9e', controller: true, blockOwnerDeletion: true }],
    finalizers: ['kubeloop.dev/cleanup'],
  },
};

/** Every event of a body delivered in `chunks`, as the decoder hands them over; async, so a throw is a rejection. */
async function events(chunks: Buffer[], maxObjectValues?: number) {
  const decoder = new ProtobufWatchDecoder({ maxObjectValues });
  const out = chunks.flatMap((chunk) => decoder.push(chunk));
  return [...out, ...decoder.end()];
}

describe('decodeEnvelopedObject', () => {
  it('reads a PartialObjectMetadata as its JSON reads, keys in the same order, managedFields skipped', () => {
    const object = decodeEnvelopedObject(Buffer.from(partialObjectMetadata(POD)));
    expect(object).toEqual(POD_JSON);
    expect(JSON.stringify(object)).toBe(JSON.stringify(POD_JSON));
  });

  it('leaves out what Go leaves out of the JSON: empty strings, generation 0, the zero time; keeps a set grace period of 0', () => {
    expect(decodeEnvelopedObject(Buffer.from(partialObjectMetadata({ resourceVersion: '9' })))).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { resourceVersion: '9' } });
    const deleting = decodeEnvelopedObject(Buffer.from(partialObjectMetadata({ name: 'a', generation: 3, deletionSeconds: 1_800_000_000, deletionGracePeriodSeconds: 0 })));
    expect(deleting.metadata).toEqual({ name: 'a', generation: 3, deletionTimestamp: '2027-01-15T08:00:00Z', deletionGracePeriodSeconds: 0 });
  });

  it('refuses what it does not read, by name: no envelope, a content encoding', () => {
    expect(() => decodeEnvelopedObject(Buffer.from('{"kind":"Pod"}'))).toThrow('no k8s envelope');
    expect(() => decodeEnvelopedObject(Buffer.from(enveloped('meta.k8s.io/v1', 'PartialObjectMetadata', new Uint8Array(0), 'gzip')))).toThrow('content encoding gzip');
  });

  it('reads a whole object (a server that ignored as=PartialObjectMetadata) as its metadata: field 1 of every kind', () => {
    const spec = new BinaryWriter().tag(1, 2).string('nginx').finish();
    const pod = new BinaryWriter().tag(1, 2).bytes(objectMeta({ name: 'web', namespace: 'team-a', resourceVersion: '7' })).tag(2, 2).bytes(spec).tag(3, 2).bytes(new Uint8Array(0)).finish();
    expect(decodeEnvelopedObject(Buffer.from(enveloped('v1', 'Pod', pod)))).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a', resourceVersion: '7' } });
  });

  it('fails on a message cut short instead of reading past it', () => {
    const whole = Buffer.from(partialObjectMetadata(POD));
    expect(() => decodeEnvelopedObject(whole.subarray(0, whole.length - 7))).toThrow(/past|EOF/);
  });
});

describe('ProtobufWatchDecoder', () => {
  const stream = Buffer.concat([watchFrame('ADDED', partialObjectMetadata(POD)), watchFrame('MODIFIED', partialObjectMetadata({ ...POD, resourceVersion: '48214' })), watchFrame('BOOKMARK', partialObjectMetadata({ resourceVersion: '48300', annotations: { 'k8s.io/initial-events-end': 'true' } }))]);

  it('yields every event of the stream, however the body cuts it into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), async (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const chunks = points.slice(1).map((end, i) => stream.subarray(points[i], end));
        const got = await events(chunks);
        expect(got.map((e) => [e.type, (e.object as typeof POD_JSON).metadata.resourceVersion])).toEqual([['ADDED', '48213'], ['MODIFIED', '48214'], ['BOOKMARK', '48300']]);
        expect(got[0]?.object).toEqual(POD_JSON);
      }),
      { numRuns: 200 },
    );
  });

  it('a chunk of several frames is one batch', async () => {
    const batches = [new ProtobufWatchDecoder().push(stream).length];
    expect(batches).toEqual([3]);
  });

  it('an ERROR event carries its Status: a 410 is the informer\'s WatchGoneError', async () => {
    const [event] = await events([watchFrame('ERROR', status({ status: 'Failure', message: 'too old resource version: 1 (48213)', reason: 'Expired', code: 410 }))]);
    expect(event?.type).toBe('ERROR');
    expect(watchErrorEvent('pods', event?.object)).toBeInstanceOf(WatchGoneError);
  });

  it('fails on a body that ends inside a frame, and on a length no watch frame has', async () => {
    await expect(events([stream.subarray(0, stream.length - 3)])).rejects.toThrow('ended inside a protobuf frame');
    const huge = Buffer.alloc(8);
    huge.writeUInt32BE(MAX_FRAME_BYTES + 1);
    await expect(events([huge])).rejects.toThrow('not a watch stream');
  });

  it('marks an event within the value budget only when its frame is no longer than the budget', () => {
    const frame = watchFrame('ADDED', partialObjectMetadata(POD)).subarray(4);
    expect(decodeWatchEvent(frame, { maxObjectValues: frame.length }).withinBudget).toBe(true);
    expect(decodeWatchEvent(frame, { maxObjectValues: frame.length - 1 }).withinBudget).toBeUndefined();
    expect(decodeWatchEvent(frame).withinBudget).toBeUndefined();
  });
});
