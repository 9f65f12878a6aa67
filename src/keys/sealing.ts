import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Sealed format: version byte 1 | 12-byte IV | 16-byte GCM tag | ciphertext.
// The associated data binds a sealed value to its row, so a ciphertext
// copied onto another key id does not open.
const VERSION = 1;

export function seal(key: Buffer, plaintext: Buffer, associatedData: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function unseal(key: Buffer, sealed: Buffer, associatedData: string): Buffer {
  if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error('sealed value has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13));
  decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
}
