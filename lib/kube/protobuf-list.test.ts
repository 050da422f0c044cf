import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { decodeMetadataList } from './protobuf-list.ts';
import { enveloped, objectMeta, partialObjectMetadataList, status } from '../../test/support/protobuf-watch-frames.ts';

/**
 * Two pages of one metadata-only ConfigMap list (limit 4) that a Kubernetes 1.37 API server answered in protobuf and,
 * at the same resourceVersion, in JSON (test/fixtures/protobuf-list/README.md).
 */
const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/protobuf-list/${name}`, import.meta.url));
const PAGES = [1, 2].map((n) => ({ protobuf: fixture(`configmaps-page${n}.pb`), json: JSON.parse(fixture(`configmaps-page${n}.json`).toString('utf8')) as { metadata: object; items: Array<{ metadata: Record<string, unknown> }> } }));

/** The JSON page without its items' managedFields, which the protobuf decoder skips. */
function withoutManagedFields(page: (typeof PAGES)[number]['json']): unknown {
  return { ...page, items: page.items.map((item) => ({ ...item, metadata: Object.fromEntries(Object.entries(item.metadata).filter(([key]) => key !== 'managedFields')) })) };
}

describe('decodeMetadataList', () => {
  it.each([0, 1])('reads page %i of a real server\'s list as its JSON reads, in the same key order, but for managedFields', (index) => {
    const { protobuf, json } = PAGES[index]!;
    expect(json.items.some((item) => Array.isArray(item.metadata.managedFields))).toBe(true);
    const page = decodeMetadataList(protobuf);
    expect(page).toEqual(withoutManagedFields(json));
    expect(JSON.stringify(page)).toBe(JSON.stringify(withoutManagedFields(json)));
  });

  it('carries the paging fields as the JSON does: the first page its continue token and remaining count, the last neither', () => {
    const [first, last] = PAGES.map(({ protobuf }) => decodeMetadataList(protobuf).metadata);
    expect(first).toEqual(PAGES[0]!.json.metadata);
    expect(first).toMatchObject({ continue: expect.stringMatching(/^eyJ/), remainingItemCount: 2 });
    expect(last).toEqual(PAGES[1]!.json.metadata);
    expect(last).not.toHaveProperty('continue');
  });

  it('reads the list\'s metadata alone when asked to, every item skipped', () => {
    expect(decodeMetadataList(PAGES[0]!.protobuf, false)).toEqual({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: PAGES[0]!.json.metadata, items: [] });
  });

  it('reads the shard selector the server applied, a remaining count of 0, and an empty list', () => {
    const page = decodeMetadataList(Buffer.from(partialObjectMetadataList({ resourceVersion: '9', continue: 'next', remainingItemCount: 0, shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')" }, [])));
    expect(page).toEqual({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '9', continue: 'next', remainingItemCount: 0, shardInfo: { selector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')" } },
      items: [],
    });
  });

  it('reads a list of whole objects (a server that ignored as=PartialObjectMetadataList) as their metadata', () => {
    const pod = new BinaryWriter().tag(1, 2).bytes(objectMeta({ name: 'web', namespace: 'a', resourceVersion: '7' })).tag(2, 2).bytes(new BinaryWriter().tag(1, 2).string('spec').finish()).finish();
    const list = new BinaryWriter().tag(1, 2).bytes(new BinaryWriter().tag(2, 2).string('8').finish()).tag(2, 2).bytes(pod).finish();
    expect(decodeMetadataList(Buffer.from(enveloped('v1', 'PodList', list)))).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '8' }, items: [{ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'web', namespace: 'a', resourceVersion: '7' } }] });
  });

  it('refuses, saying so, a Status, JSON, an empty body, and a content encoding', () => {
    expect(() => decodeMetadataList(Buffer.from(status({ status: 'Failure', message: 'gone', reason: 'Expired', code: 410 })))).toThrow(/^protobuf list: \d+ bytes that are not a whole list: a Status$/);
    expect(() => decodeMetadataList(PAGES[0]!.protobuf.subarray(0, 0))).toThrow('protobuf list: 0 bytes that are not a whole list: protobuf object: no k8s envelope');
    expect(() => decodeMetadataList(Buffer.from(JSON.stringify(PAGES[0]!.json)))).toThrow('no k8s envelope');
    expect(() => decodeMetadataList(Buffer.from(enveloped('meta.k8s.io/v1', 'PartialObjectMetadataList', new Uint8Array(0), 'gzip')))).toThrow('content encoding gzip');
  });

  it('fails with an error that names the list, never reads past the body, wherever the body is cut short', () => {
    const whole = PAGES[0]!.protobuf;
    // Up to the envelope's last two fields (an empty contentEncoding and contentType, 2 bytes each): a body cut
    // after the list's last byte is a whole list still, as protobuf has no end mark.
    for (let length = 1; length < whole.length - 4; length++) {
      expect(() => decodeMetadataList(whole.subarray(0, length)), `cut at ${length}`).toThrow(/^protobuf list: \d+ bytes that are not a whole list/);
    }
  });

  it('either decodes a corrupted body or fails with the list\'s error: no other exception, no hang', () => {
    const whole = PAGES[0]!.protobuf;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: whole.length - 1 }), fc.nat({ max: 255 })), { minLength: 1, maxLength: 4 }), (flips) => {
        const corrupt = Buffer.from(whole);
        for (const [at, value] of flips) corrupt[at] = value;
        try {
          const page = decodeMetadataList(corrupt);
          expect(Array.isArray(page.items)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          expect((error as Error).message).toMatch(/^protobuf list: /);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
