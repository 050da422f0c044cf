// What KubeClient reads from an API server's answer, whichever transport carried it (undici, node:http2): its text,
// its bytes in the media type the server chose (a metadata-only list in protobuf), or the text of an error's Status.
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
  return 'text' in reply ? Promise.resolve(reply.text) : reply.body.text();
}

/** node:http2's answers (writes only, never asked for protobuf) come as text: their bytes are that text's. */
export async function replyBytes(reply: Reply): Promise<BytesAnswer> {
  const bytes = 'text' in reply ? Buffer.from(reply.text) : Buffer.from(await reply.body.arrayBuffer());
  return { bytes, contentType: headerText(reply.headers['content-type']) };
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
