/** Live Inbox content blocks: the TypeScript shapes, their strict zod schemas and a deep copy. */
import { z } from 'zod';
import { InboxKitError, type ErrorDetail } from '../errors.js';
import { hasLoneSurrogate, wasParsedBy } from '../validation.js';

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

/**
 * The image `media_type`s a Messages-API model takes. Spec: live-inbox.md "Content blocks".
 */
export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

/**
 * Most characters of a base64 image `data` string: 5 MiB (5,242,880) of base64, i.e. at most
 * 3,932,160 image bytes — within the Messages API's 5 MB per-image limit whichever of the two it
 * counts. (The HTTP body limit, 1 MiB by default, is usually reached first.) Spec: live-inbox.md
 * "Content blocks".
 */
export const MAX_IMAGE_BASE64_CHARS = 5 * 1024 * 1024;

/** Leading bytes of each accepted image type (WebP: `RIFF`, 4 size bytes, `WEBP`). */
const SIGNATURES: Record<(typeof IMAGE_MEDIA_TYPES)[number], (bytes: Uint8Array) => boolean> = {
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/png': (b) => [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => b[i] === x),
  'image/gif': (b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'),
  'image/webp': (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP'),
};

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Standard base64 (RFC 4648 §4): `A–Z a–z 0–9 + /`, padded with `=` to a multiple of 4; no whitespace. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The first bytes (up to 12) of base64 `data` already known to be well formed. */
function leadingBytes(data: string): Uint8Array {
  const binary = atob(data.slice(0, 16));
  return Uint8Array.from(binary.slice(0, 12), (c) => c.charCodeAt(0));
}

/**
 * Hosts an image URL may not name: loopback, link-local (cloud metadata endpoints such as
 * 169.254.169.254 among them), private and unspecified addresses, written as IP literals (IPv4
 * in any of the forms WHATWG URL parsing normalises, IPv6 including IPv4-mapped), and the names
 * `localhost` / `*.localhost`, `metadata.google.internal`, `*.internal`, `*.local`. A name that
 * resolves to such an address is the fetcher's to refuse (this check does not resolve names).
 * Spec: live-inbox.md "Content blocks".
 */
export function isBlockedImageHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) return true;
  if (host.startsWith('[')) return isBlockedIpv6(host.slice(1, -1));
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  return v4 !== null && isBlockedIpv4(v4.slice(1).map(Number));
}

function isBlockedIpv4([a = 0, b = 0]: number[]): boolean {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31)
    || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
}

function isBlockedIpv6(address: string): boolean {
  // WHATWG URL prints IPv6 compressed and lower-cased; IPv4-mapped addresses as ::ffff:hhhh:hhhh.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return isBlockedIpv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  if (address === '::' || address === '::1') return true;
  const first = parseInt(address.split(':')[0] || '0', 16);
  return (first & 0xfe00) === 0xfc00 /* fc00::/7 unique local */ || (first & 0xffc0) === 0xfe80 /* fe80::/10 link-local */
    || (first & 0xff00) === 0xff00 /* multicast */;
}

const textBlockSchema = z.strictObject({
  type: z.literal('text'),
  // A Messages-API model refuses a text block without a non-whitespace character.
  text: blockString().refine((s) => /\S/u.test(s), { message: 'text must contain a non-whitespace character' })
    .meta({ pattern: '\\S', description: 'At least one non-whitespace character (Unicode spaces count as whitespace); no lone surrogate' }),
});

const base64SourceSchema = z.strictObject({
  type: z.literal('base64'),
  media_type: z.enum(IMAGE_MEDIA_TYPES, { message: `media_type must be one of ${IMAGE_MEDIA_TYPES.join(', ')}` }),
  data: z.string()
    .min(1, 'data must not be empty')
    .max(MAX_IMAGE_BASE64_CHARS, `data is over ${MAX_IMAGE_BASE64_CHARS} base64 characters`)
    .refine((d) => d.length % 4 === 0 && BASE64.test(d), { message: 'data must be standard base64 (A-Z a-z 0-9 + /, = padding, no whitespace or data: prefix)' })
    .meta({
      pattern: '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$', format: 'byte',
      description: 'Standard base64 (A–Z a–z 0–9 + /, `=` padding to a multiple of 4, no whitespace, no `data:` prefix), 1–5,242,880 characters, '
        + 'of bytes that start with the signature of `media_type` (JPEG FF D8 FF, PNG 89 50 4E 47 0D 0A 1A 0A, GIF87a/GIF89a, WebP RIFF….WEBP)',
    }),
}).superRefine((source, ctx) => {
  // Runs only on a well-formed source (earlier issues may be continuable: check again).
  const signature = (SIGNATURES as Record<string, ((bytes: Uint8Array) => boolean) | undefined>)[source.media_type];
  if (signature === undefined || typeof source.data !== 'string' || source.data.length === 0 || source.data.length % 4 !== 0 || !BASE64.test(source.data)) return;
  if (!signature(leadingBytes(source.data))) {
    ctx.addIssue({ code: 'custom', path: ['data'], message: `data does not hold a ${source.media_type} image (its first bytes are not that format's signature)` });
  }
});

const urlSourceSchema = z.strictObject({
  type: z.literal('url'),
  url: z.string().max(2048, 'url is over 2048 characters').superRefine((url, ctx) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'url must be an absolute http: or https: URL' });
      return;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', message: 'url must be an absolute http: or https: URL' });
    } else if (parsed.username !== '' || parsed.password !== '') {
      ctx.addIssue({ code: 'custom', message: 'url must not carry credentials' });
    } else if (isBlockedImageHost(parsed.hostname)) {
      ctx.addIssue({ code: 'custom', message: 'url must not name a loopback, link-local, private or internal host' });
    }
  }).meta({
    format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    description: 'An absolute http: or https: URL of at most 2,048 characters, without user name or password; not a loopback, link-local, private, '
      + 'unspecified, multicast or reserved IP literal (in any spelling), nor localhost, *.localhost, *.internal or *.local',
  }),
});

const imageSourceSchema = z.discriminatedUnion('type', [base64SourceSchema, urlSourceSchema]);

const imageBlockSchema = z.strictObject({ type: z.literal('image'), source: imageSourceSchema });

/**
 * Schema of one {@link ContentBlock}: what a Messages-API model accepts (live-inbox.md "Content
 * blocks"). Strict: an unknown field (at any level), an unknown block `type` or an unknown
 * `source.type` is rejected. Text must contain a non-whitespace character; a base64 image has one
 * of {@link IMAGE_MEDIA_TYPES}, non-empty standard base64 `data` of at most
 * {@link MAX_IMAGE_BASE64_CHARS} characters whose bytes start like that type; a URL image is an
 * absolute `http:`/`https:` URL (at most 2,048 characters) without credentials whose host is not
 * blocked ({@link isBlockedImageHost}). Every path that takes content shares it: Live Inbox queue
 * and replace (HTTP and {@link LiveInboxQueue}) and durable `user.message` events.
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
  // Already parsed by this schema (a request body's content, see `markParsed`): copied, not parsed again.
  if (wasParsedBy(contentSchema, content)) return cloneContent(content as ContentBlock[]);
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
