// What KubeClient reads from an API server's answer, whichever transport carried it (undici, node:http2): its text,
// its bytes in the media type the server chose (a metadata-only list in protobuf), or the text of an error's Status.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import type { Http2Reply } from './node-http2-writes.ts';
import { decodeEnvelopedObject } from './protobuf-object.ts';
import { isProtobufMediaType } from './protobuf-watch-stream.ts';

/** What a request answered: undici's response, or node:http2's read whole. */
export type Reply = Dispatcher.ResponseData | Http2Reply;

/** An answer's bytes and the media type the server answered in (its Content-Type, '' when it named none). */
export interface BytesAnswer {
  bytes: Buffer;
  contentType: string;
}

export function replyText(reply: Reply): Promise<string> {
  return 'bytes' in reply ? Promise.resolve(reply.bytes.toString('utf8')) : reply.body.text();
}

/** node:http2's answers (writes) were read whole; undici's are read here. */
export async function replyBytes(reply: Reply): Promise<BytesAnswer> {
  const bytes = 'bytes' in reply ? reply.bytes : Buffer.from(await reply.body.arrayBuffer());
  return { bytes, contentType: headerText(reply.headers['content-type']) };
}

/**
 * An object's metadata from an answer asked for with METADATA_OBJECT_ACCEPT: PartialObjectMetadata in protobuf
 * (managedFields skipped unread) or, from a server or kind that answered JSON, its JSON parsed.
 */
export function metadataOf({ bytes, contentType }: BytesAnswer): Pick<KubernetesObject, 'metadata'> {
  return isProtobufMediaType(contentType) ? decodeEnvelopedObject(bytes) : (JSON.parse(bytes.toString('utf8')) as KubernetesObject);
}

/**
 * A refusal's body as the text apiError reads: a Status in protobuf (an answer to a request that offered it) as its
 * JSON, so its reason and message are read as from a JSON one; any other body as it came.
 */
export async function replyErrorText(reply: Reply): Promise<string> {
  if (!isProtobufMediaType(headerText(reply.headers['content-type']))) return replyText(reply);
  const { bytes } = await replyBytes(reply);
  try {
    return JSON.stringify(decodeEnvelopedObject(bytes));
  } catch {
    return bytes.toString('latin1');
  }
}

export function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}
