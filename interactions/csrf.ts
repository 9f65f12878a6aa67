import { createHmac } from 'node:crypto';
import { digestsEqual, hmacKey } from '../src/security/secrets.ts';

// Each login form carries an HMAC of its interaction id. A cross-site page
// can neither read it nor (SameSite=Lax) send the interaction cookie, so a
// forged POST fails twice over.

export function csrfToken(key: Buffer, interactionUid: string): string {
  return createHmac('sha256', hmacKey(key)).update(interactionUid).digest('base64url');
}

export function csrfValid(key: Buffer, interactionUid: string, token: string): boolean {
  return digestsEqual(Buffer.from(csrfToken(key, interactionUid)), Buffer.from(token));
}
