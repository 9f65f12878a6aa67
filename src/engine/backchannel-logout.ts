import type { Logger } from '../logger.ts';

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
 * OIDC Back-Channel Logout 1.0 2.5 lets a failed delivery be retried and
 * wants logout to go on without waiting for the apps: a user's logout never
 * waits for an app's server, each delivery gets three attempts, and the one
 * that still fails is logged (app, reason; never the token) and counted.
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
        const delay = RETRY_DELAYS_MS[tries];
        if (delay === undefined) {
          log.warn({ clientId, attempts: tries + 1, reason: err instanceof Error ? err.message : String(err) }, 'back-channel logout delivery failed');
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
