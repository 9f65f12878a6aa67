import { createHmac } from 'node:crypto';
import { digestsEqual } from './secrets.ts';

// The signature of the requests the service POSTs to other hosts (the SMS
// relay, webhooks), as Stripe signs its webhooks: the receiver recomputes
// it with the signing key it was given, and refuses old timestamps so a
// recorded request cannot be replayed later.

export const SIGNATURE_HEADER = 'Portcullis-Signature';

function mac(signingKey: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(signingKey, 'utf8')).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(signingKey, "<t>.<body>")>`; the key
 * is the signing key as handed out (its UTF-8 bytes). Sign each attempt
 * anew: a retry carries its own time.
 */
export function signatureHeader(signingKey: string, body: string, now = new Date()): string {
  const timestamp = Math.floor(now.getTime() / 1000);
  return `t=${timestamp},v1=${mac(signingKey, timestamp, body)}`;
}

/** Whether `header` signs `body` with `signingKey` at a time at most `toleranceSeconds` from `now` (what a receiver checks). */
export function signatureValid(signingKey: string, header: string, body: string, toleranceSeconds = 300, now = new Date()): boolean {
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isSafeInteger(timestamp) || !/^[0-9a-f]{64}$/.test(given)) return false;
  if (Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return false;
  return digestsEqual(Buffer.from(mac(signingKey, timestamp, body), 'hex'), Buffer.from(given, 'hex'));
}
