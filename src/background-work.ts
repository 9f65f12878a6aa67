import { join, resolve } from 'node:path';
import type { ConfigResult } from '../config/load.ts';
import type { Logger } from './logger.ts';
import type { Database } from './storage/database.ts';
import type { Announce } from './storage/invalidation.ts';
import { deleteExpiredUserSessions } from './storage/user-sessions.ts';
import { sweepExpiredEngineRecords } from '../adapters/postgres.ts';
import { unlockExpiredLocks } from './commands/password-login.ts';
import { startNotificationWorker } from './commands/deliver-notifications.ts';
import { outboxFileSender, smtpSender } from './outbound/mail-senders.ts';
import type { SmtpSettings } from './outbound/smtp-settings.ts';
import type { SmsSender } from './outbound/sms-relay.ts';
import { effectiveSmtpSettings } from './queries/smtp-settings.ts';
import type { Metrics } from './http/metrics.ts';

// The work every node does in the background beside answering requests:
// housekeeping of expired records and locks, and the outbox of messages.

const SWEEP_INTERVAL_MS = 60_000;
/** Timed user locks end within this of their time (a login ends its own lock at once). */
const UNLOCK_INTERVAL_MS = 5_000;
/** A queued mail leaves within this. */
const NOTIFICATION_POLL_MS = 1_000;

/** Expired engine records and session index entries swept, ended user locks lifted, in the background. */
export function startHousekeeping(db: Database, announce: Announce, log: Logger): { stop(): void } {
  let sweeping: Promise<unknown> | undefined;
  const sweeper = setInterval(() => {
    // A long sweep is not overtaken by the next one.
    sweeping ??= Promise.all([sweepExpiredEngineRecords(db), deleteExpiredUserSessions(db)])
      .catch((err) => log.warn({ err }, 'expired record sweep failed'))
      .finally(() => (sweeping = undefined));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  const unlocker = setInterval(() => {
    unlockExpiredLocks(db).then(
      (lifted) => lifted && announce('users'),
      (err) => log.warn({ err }, 'lifting ended user locks failed'),
    );
  }, UNLOCK_INTERVAL_MS);
  unlocker.unref();
  return {
    stop() {
      clearInterval(sweeper);
      clearInterval(unlocker);
    },
  };
}

/** SMTP_URL's server with SMTP_FROM's sender, if set. */
export function smtpFromEnvironment(config: ConfigResult): SmtpSettings | undefined {
  return config.smtp && { ...config.smtp, ...config.mailFrom };
}

/**
 * Mails waiting in the outbox, sent by this node too: through the admin
 * API's SMTP server, else SMTP_URL's, else into DATA_DIR/outbox.
 */
export function startNotifications(
  db: Database,
  config: ConfigResult,
  sealingKey: Buffer,
  log: Logger,
  metrics: Metrics,
  smsSender: () => Promise<SmsSender | undefined>,
) {
  const outboxFolder = outboxFileSender(join(resolve(config.dataDir), 'outbox'), config.mailFrom);
  return startNotificationWorker({
    db,
    log,
    sender: async () => {
      const smtp = await effectiveSmtpSettings(db, sealingKey, smtpFromEnvironment(config));
      return smtp ? smtpSender(smtp) : outboxFolder;
    },
    smsSender,
    onDelivery: (outcome) => metrics.notifications.inc({ outcome }),
    pollMs: NOTIFICATION_POLL_MS,
    retryForSeconds: 3600,
    firstDelaySeconds: 10,
    maxDelaySeconds: 600,
  });
}
