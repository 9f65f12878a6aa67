import type { Logger } from '../logger.ts';
import type { MailSender } from '../outbound/mail-senders.ts';
import { mailLanguage, renderMail, renderSms } from '../pages/mail-render.ts';
import type { SmsSender } from '../outbound/sms-relay.ts';
import { orgMessageTexts } from '../queries/message-texts.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite } from '../storage/event-log.ts';
import { claimDueMessages, deleteFinishedMessages, markFailed, markSent, scheduleRetry, type QueuedMessage } from '../storage/outbox.ts';

export type DeliveryOutcome = 'sent' | 'retried' | 'failed';

export interface DeliveryOptions {
  db: Database;
  log: Logger;
  /** Where mails go now (the SMTP server, or the outbox folder without one). */
  sender: () => Promise<MailSender>;
  /** Where SMS go now: the relay, or none (they wait, retried, until one is set or they are given up). */
  smsSender?: () => Promise<SmsSender | undefined>;
  onDelivery(outcome: DeliveryOutcome): void;
  /** How often the outbox is looked at. */
  pollMs: number;
  /** A message that has failed for this long is given up (at least an hour in production). */
  retryForSeconds: number;
  /** The first retry's delay; each next one doubles, up to `maxDelaySeconds`. */
  firstDelaySeconds: number;
  maxDelaySeconds: number;
}

/** A claimed message is not taken by another node for this long; a node that dies mid-send leaves it to be sent again after it. */
const LEASE_SECONDS = 120;
const BATCH = 20;
/** Sent and given-up messages no longer carry anything secret; they are kept a week for inspection. */
const KEEP_FINISHED_SECONDS = 7 * 86400;

/** The delay before the next attempt after `attempts` failed ones: exponential backoff. */
export function retryDelay(attempts: number, firstDelaySeconds: number, maxDelaySeconds: number): number {
  return Math.min(maxDelaySeconds, firstDelaySeconds * 2 ** Math.max(0, attempts - 1));
}

/** The error's text without anything of the message: the SMTP server's answer or the connection's failure. */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 300);
}

async function giveUp(options: DeliveryOptions, message: QueuedMessage, reason: string): Promise<void> {
  await options.db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    await markFailed(write, message.id, reason);
    await write.append({
      aggregateType: 'user',
      aggregateId: message.userId,
      type: 'notification.failed',
      resourceOwner: message.orgId,
      payload: { messageId: message.id, messageType: message.type, attempts: message.attempts, reason },
    });
  });
  options.log.error({ messageId: message.id, messageType: message.type, userId: message.userId, attempts: message.attempts, reason }, 'notification given up');
  options.onDelivery('failed');
}

interface Senders {
  mail: MailSender;
  sms: SmsSender | undefined;
}

/** Hands the message to its sender; answers the outbox file a mail was written to, if any. */
async function send(options: DeliveryOptions, senders: Senders, message: QueuedMessage): Promise<string | undefined> {
  const custom = await orgMessageTexts(options.db, message.orgId, message.type, mailLanguage(message.language));
  if (message.channel === 'sms') {
    if (!senders.sms) throw new Error('no SMS relay is set');
    const text = renderSms(message.type, message.language, message.values, custom);
    await senders.sms.send({ to: message.recipient, text, type: message.type, userId: message.userId, orgId: message.orgId });
    return undefined;
  }
  const mail = renderMail(message.type, message.language, message.values, custom);
  return (await senders.mail.send({ to: message.recipient, ...mail, type: message.type, userId: message.userId })).file;
}

async function deliver(options: DeliveryOptions, senders: Senders, message: QueuedMessage): Promise<void> {
  let file: string | undefined;
  try {
    file = await send(options, senders, message);
  } catch (err) {
    return failedAttempt(options, message, reasonOf(err));
  }
  // Should this fail (the database is away), the message is sent again after the lease, as after a crash mid-send.
  await markSent(options.db, message.id);
  if (file) options.log.info({ file, messageType: message.type, userId: message.userId }, 'no SMTP server set: mail written to the outbox folder');
  options.onDelivery('sent');
}

async function failedAttempt(options: DeliveryOptions, message: QueuedMessage, reason: string): Promise<void> {
  const failingFor = (Date.now() - message.createdAt.getTime()) / 1000;
  if (failingFor >= options.retryForSeconds) return giveUp(options, message, reason);
  const delay = retryDelay(message.attempts, options.firstDelaySeconds, options.maxDelaySeconds);
  await scheduleRetry(options.db, message.id, delay, reason);
  options.log.warn(
    { messageId: message.id, messageType: message.type, attempts: message.attempts, retryInSeconds: delay, reason },
    'notification not sent; retrying',
  );
  options.onDelivery('retried');
}

/** Sends the due messages until none is left; answers how many it took. */
export async function deliverDueMessages(options: DeliveryOptions): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await claimDueMessages(options.db, BATCH, LEASE_SECONDS);
    if (!claimed.length) return total;
    // The settings of the moment, read once per batch.
    const senders = { mail: await options.sender(), sms: await options.smsSender?.() };
    // One at a time: a slow server is not hit by a whole batch at once.
    for (const message of claimed) await deliver(options, senders, message);
    total += claimed.length;
    if (claimed.length < BATCH) return total;
  }
}

/**
 * The outbox worker every node runs (docs/operations.md, "Mail"). `stop`
 * waits for the round under way, so no send is cut off by the pools closing.
 */
export function startNotificationWorker(options: DeliveryOptions): { stop(): Promise<void>; wake(): void } {
  let round: Promise<unknown> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    round ??= deliverDueMessages(options)
      .then(() => deleteFinishedMessages(options.db, KEEP_FINISHED_SECONDS))
      .catch((err) => options.log.warn({ err: { message: reasonOf(err) } }, 'notification delivery round failed'))
      .finally(() => (round = undefined));
  };
  const timer = setInterval(run, options.pollMs);
  timer.unref();
  run();
  return {
    wake: run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await round;
    },
  };
}
