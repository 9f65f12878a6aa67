import type { OutboundFetch } from './client.ts';
import { SIGNATURE_HEADER, signatureHeader } from '../security/webhook-signature.ts';

export interface OutgoingSms {
  to: string;
  text: string;
  /** The message type, e.g. `PasswordReset`. */
  type: string;
  userId: string;
  orgId: string;
}

/** Sends one SMS or throws. */
export interface SmsSender {
  send(sms: OutgoingSms): Promise<void>;
}

export interface SmsRelay {
  endpoint: string;
  signingKey: string;
}

/**
 * The SMS relay (docs/api/sms.md): each SMS a signed JSON POST through the
 * outbound client; any answer but 2xx is a failed attempt the worker retries.
 */
export function smsRelaySender(fetch: OutboundFetch, relay: SmsRelay): SmsSender {
  return {
    async send(sms) {
      const body = JSON.stringify({ to: sms.to, text: sms.text, type: sms.type, userId: sms.userId, orgId: sms.orgId });
      const response = await fetch(relay.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signatureHeader(relay.signingKey, body) },
        body,
      });
      // The answer is not read: it is the relay's, and only its status counts.
      await response.body?.cancel();
      if (response.status < 200 || response.status > 299) throw new Error(`the SMS relay answered HTTP ${response.status}`);
    },
  };
}
