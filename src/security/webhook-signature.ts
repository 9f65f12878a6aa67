import { createHmac } from 'node:crypto';

/**
 * The `Portcullis-Signature` header of a call to a target (docs/actions.md):
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>`, the scheme
 * Stripe's webhooks made common. The time inside lets the receiver refuse
 * replays; every attempt is signed afresh, so a retry carries a new `t`.
 */
export function signPayload(key: string, body: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000);
  const v1 = createHmac('sha256', key).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

export const SIGNATURE_HEADER = 'Portcullis-Signature';
