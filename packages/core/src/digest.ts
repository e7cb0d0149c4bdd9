/**
 * SHA-256 and HMAC-SHA-256 for the core (API key hashes, idempotency request hashes, stream token
 * signatures): synchronous through `node:crypto` where the runtime lends it
 * (`process.getBuiltinModule`: Node ≥ 20.16, Bun, Deno), Web Crypto elsewhere. The core imports no
 * Node module: the builtin is asked for at load time and its absence is not an error.
 *
 * Why not Web Crypto everywhere: on Node, `crypto.subtle.digest` runs on the libuv thread pool,
 * ~20 µs of CPU and a thread hop per call where `node:crypto` takes ~1 µs on the calling thread —
 * once per authenticated request (the principal cache is keyed by the key's hash). Both give the
 * same bytes; `digest.test.ts` checks the two against each other.
 */

/** The part of `node:crypto` used here (one-shot `hash` is Node ≥ 20.12; `createHash` otherwise). */
export interface NodeDigests {
  hash?: (algorithm: string, data: string, outputEncoding: 'hex') => string;
  createHash(algorithm: string): { update(data: string, encoding: 'utf8'): { digest(encoding: 'hex'): string } };
  createHmac(algorithm: string, key: string): { update(data: string, encoding: 'utf8'): { digest(): Uint8Array } };
}

/** The digests over `node` (the `node:crypto` module, or undefined: Web Crypto). */
export interface Digests {
  /** Lowercase hex SHA-256 of `text`'s UTF-8 bytes: a string with `node:crypto`, a promise with Web Crypto. */
  sha256Hex(text: string): string | Promise<string>;
  /** HMAC-SHA-256 of `data` (UTF-8) keyed by `key` (UTF-8): 32 bytes, synchronously with `node:crypto`. */
  hmacSha256(key: string, data: string): Uint8Array | Promise<Uint8Array>;
}

const encoder = new TextEncoder();
const hex = (bytes: ArrayBuffer): string => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

/** {@link Digests} on `node` when given, else on `globalThis.crypto.subtle`. */
export function digestsOf(node: NodeDigests | undefined): Digests {
  if (node === undefined) {
    return {
      sha256Hex: async (text) => hex(await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text))),
      hmacSha256: async (key, data) => {
        const imported = await globalThis.crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
        return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', imported, encoder.encode(data)));
      },
    };
  }
  const { hash } = node;
  return {
    sha256Hex: typeof hash === 'function' ? (text) => hash('sha256', text, 'hex') : (text) => node.createHash('sha256').update(text, 'utf8').digest('hex'),
    hmacSha256: (key, data) => new Uint8Array(node.createHmac('sha256', key).update(data, 'utf8').digest()),
  };
}

/** `node:crypto` when the runtime lends its builtins (`process.getBuiltinModule`), else undefined. */
function nodeCrypto(): NodeDigests | undefined {
  const lend = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (typeof lend !== 'function') return undefined;
  try {
    const module = lend('node:crypto') as NodeDigests | undefined;
    return typeof module?.createHash === 'function' && typeof module.createHmac === 'function' ? module : undefined;
  } catch {
    return undefined;
  }
}

/** The process's digests (see the module comment). */
export const { sha256Hex, hmacSha256 } = digestsOf(nodeCrypto());
