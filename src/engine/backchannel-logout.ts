import type { Logger } from '../logger.ts';
import { OutboundError, OutboundRefused } from '../outbound/errors.ts';

/** What became of one logout token's delivery, for /metrics. */
export type DeliveryResult = 'delivered' | 'failed';

/** Pauses before the second and third attempt (each attempt has the engine's 2.5 s timeout). */
const RETRY_DELAYS_MS = [1000, 4000];

export interface LogoutDeliveries {
  /**
   * Starts delivering in the background and returns at once: `attempt`
   * POSTs one logout token (a new one each time, with its own jti) and
   * rejects unless the app answered 200 or 204.
   */
  send(attempt: () => Promise<void>, clientId: string): void;
}

/**
 * Why a delivery failed, without the URI (its query may carry a secret) or
 * anything the app answered: the engine's own error quotes the whole URI.
 */
function failureReason(err: unknown): string {
  if (err instanceof OutboundError) return err.message;
  const failure = err as { response?: { status?: number }; cause?: { code?: string } } | undefined;
  if (failure?.response?.status !== undefined) return `answered ${failure.response.status}`;
  return failure?.cause?.code ?? (err instanceof Error ? err.message : String(err));
}

/**
 * OIDC Back-Channel Logout 1.0 2.5 lets a failed delivery be retried and
 * wants logout to go on without waiting for the apps: a user's logout never
 * waits for an app's server, each delivery gets three attempts, and the one
 * that still fails is logged (app, reason; never the token) and counted.
 * An address the outbound client refuses is not tried again: no
 * connection was made, and the next attempt would be refused the same.
 */
export function logoutDeliveries(log: Logger, onResult?: (result: DeliveryResult) => void): LogoutDeliveries {
  const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
  const deliver = async (attempt: () => Promise<void>, clientId: string) => {
    for (let tries = 0; ; tries += 1) {
      try {
        await attempt();
        onResult?.('delivered');
        return;
      } catch (err) {
        const delay = err instanceof OutboundRefused ? undefined : RETRY_DELAYS_MS[tries];
        if (delay === undefined) {
          log.warn({ clientId, attempts: tries + 1, reason: failureReason(err) }, 'back-channel logout delivery failed');
          onResult?.('failed');
          return;
        }
        await pause(delay);
      }
    }
  };
  return {
    send(attempt, clientId) {
      void deliver(attempt, clientId);
    },
  };
}
