/** Live Inbox content blocks: the TypeScript shapes, their strict zod schemas and a deep copy. */
import { z } from 'zod';
import { InboxKitError, type ErrorDetail } from '../errors.js';
import { hasLoneSurrogate } from '../validation.js';

/** A text block: `{ type: 'text', text }`. Spec: live-inbox.md "HTTP" (`content`). */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** An inline image: its MIME `media_type` (e.g. `image/png`) and base64 `data`. */
export interface Base64ImageSource {
  type: 'base64';
  media_type: string;
  data: string;
}

/** An image by reference: `url`. */
export interface UrlImageSource {
  type: 'url';
  url: string;
}

/**
 * An image block: `{ type: 'image', source }`, the source inline ({@link Base64ImageSource}) or by
 * reference ({@link UrlImageSource}). Spec: live-inbox.md "HTTP" (`content`).
 */
export interface ImageBlock {
  type: 'image';
  source: Base64ImageSource | UrlImageSource;
}

/** One block of Live Inbox content: {@link TextBlock} or {@link ImageBlock}. Spec: live-inbox.md "HTTP". */
export type ContentBlock = TextBlock | ImageBlock;

/** A string of a block: any text, but no lone surrogate (it has no UTF-8 form; the platform rejects it everywhere). */
const blockString = () => z.string().refine((s) => !hasLoneSurrogate(s), { message: 'must not contain a lone surrogate' });

const textBlockSchema = z.strictObject({ type: z.literal('text'), text: blockString() });

const imageSourceSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('base64'), media_type: blockString(), data: blockString() }),
  z.strictObject({ type: z.literal('url'), url: blockString() }),
]);

const imageBlockSchema = z.strictObject({ type: z.literal('image'), source: imageSourceSchema });

/**
 * Schema of one {@link ContentBlock}. Strict: an unknown field (at any level), an unknown block
 * `type` or an unknown `source.type` is rejected. Spec: live-inbox.md "HTTP" (unknown fields and
 * unknown block types → 400).
 */
export const contentBlockSchema: z.ZodType<ContentBlock> = z.discriminatedUnion('type', [textBlockSchema, imageBlockSchema]);

/**
 * Schema of Live Inbox `content`: a non-empty array of strict {@link contentBlockSchema} blocks.
 * The HTTP adapter parses request bodies with it; {@link LiveInboxQueue} checks it again on every
 * queue and replace. Spec: live-inbox.md "HTTP".
 */
export const contentSchema: z.ZodType<ContentBlock[]> = z.array(contentBlockSchema).min(1, 'content must hold at least one block');

/**
 * A deep copy of `content` (new arrays and objects, same strings), so no caller shares state with
 * a queue. Input is assumed already valid.
 */
export function cloneContent(content: readonly ContentBlock[]): ContentBlock[] {
  return content.map((block): ContentBlock => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    const source = block.source;
    return source.type === 'base64'
      ? { type: 'image', source: { type: 'base64', media_type: source.media_type, data: source.data } }
      : { type: 'image', source: { type: 'url', url: source.url } };
  });
}

/**
 * Validates `content` with {@link contentSchema} and returns a deep copy that shares nothing with
 * the input.
 * @throws InboxKitError `validation_error` with one {@link ErrorDetail} per problem; `path` is
 *   rooted at `content` (e.g. `content.0.source.url`).
 */
export function parseContent(content: unknown): ContentBlock[] {
  const result = contentSchema.safeParse(content);
  if (!result.success) {
    const details: ErrorDetail[] = result.error.issues.map((issue) => ({
      path: ['content', ...issue.path.map(String)].join('.'),
      message: issue.message,
      code: issue.code,
    }));
    throw new InboxKitError('validation_error', 'Live Inbox content is invalid.', details);
  }
  return cloneContent(result.data);
}
