import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A generated secret (client secret, PAT): 32 random bytes as base64url, so
 * only [A-Za-z0-9_-] — safe in Basic auth even when a client forgets to
 * form-encode it (RFC 6749 2.3.1).
 */
export function generateSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Generated secrets carry 256 bits of entropy, so a keyed SHA-256 digest is
 * as safe to store as a slow hash and costs microseconds instead of tens of
 * milliseconds per check. The key is derived from the master key.
 */
export function secretDigest(key: Buffer, secret: string): Buffer {
  return createHmac('sha256', key).update(secret).digest();
}

export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
