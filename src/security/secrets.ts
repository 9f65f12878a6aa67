import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

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
  return createHmac('sha256', keyObject(key)).update(secret).digest();
}

// A raw key is turned into a KeyObject on every createHmac; the digest key
// is one long-lived Buffer, so convert it once (a hot path: every secret check).
const keyObjects = new WeakMap<Buffer, KeyObject>();

function keyObject(key: Buffer): KeyObject {
  let object = keyObjects.get(key);
  if (!object) {
    object = createSecretKey(key);
    keyObjects.set(key, object);
  }
  return object;
}

export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
