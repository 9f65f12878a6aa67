import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import { MESSAGE_TEXT_TYPES, type MessageTextType } from '../domain/message-texts.ts';

/** The messages the service sends (docs/operations.md, "Mail"): each has texts an org may word itself. */
export const MESSAGE_TYPES = MESSAGE_TEXT_TYPES;
export type MessageType = MessageTextType;

/** The placeholders a message fills in; `Code` and `URL` are secrets until the message is sent. */
export interface MessageValues {
  Code?: string;
  URL?: string;
  UserName?: string;
  FirstName?: string;
  OrgName?: string;
}

export type MessageChannel = 'email' | 'sms';

export interface NewMessage {
  type: MessageType;
  /** A mail (the default) to an email address, or an SMS to a phone number through the relay. */
  channel?: MessageChannel;
  recipient: string;
  language: string;
  values: MessageValues;
  userId: string;
  orgId: string;
}

export interface QueuedMessage extends NewMessage {
  channel: MessageChannel;
  id: string;
  attempts: number;
  createdAt: Date;
}

/**
 * Queues a message inside the write of the event that causes it, so the
 * message exists exactly when the event is committed.
 */
export async function enqueueMessage(write: Write, message: NewMessage): Promise<string> {
  const { rows } = await write.tx.query<{ id: string }>(
    `INSERT INTO notification_outbox (message_type, recipient, language, "values", user_id, org_id, next_attempt_at, created_at, channel)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id::text AS id`,
    [message.type, message.recipient, message.language, JSON.stringify(message.values), message.userId, message.orgId, write.at, message.channel ?? 'email'],
  );
  return rows[0]!.id;
}

interface MessageRow {
  id: string;
  channel: MessageChannel;
  message_type: MessageType;
  recipient: string;
  language: string;
  values: MessageValues;
  user_id: string;
  org_id: string;
  attempts: number;
  created_at: Date;
}

/**
 * Takes up to `limit` due messages for this node: `FOR UPDATE SKIP LOCKED`
 * lets nodes claiming at once take different rows, and the claim moves each
 * row's next attempt past `leaseSeconds`, so no other node takes it while it
 * is being sent; a node that dies mid-send leaves it to be sent again then.
 */
export async function claimDueMessages(db: Queryable, limit: number, leaseSeconds: number): Promise<QueuedMessage[]> {
  const { rows } = await db.query<MessageRow>(
    `UPDATE notification_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
     WHERE id IN (
       SELECT id FROM notification_outbox WHERE state = 'pending' AND next_attempt_at <= now()
       ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id::text AS id, channel, message_type, recipient, language, "values", user_id, org_id, attempts, created_at`,
    [limit, leaseSeconds],
  );
  return rows.map((row) => ({
    id: row.id,
    channel: row.channel,
    type: row.message_type,
    recipient: row.recipient,
    language: row.language,
    values: row.values,
    userId: row.user_id,
    orgId: row.org_id,
    attempts: row.attempts,
    createdAt: new Date(row.created_at),
  }));
}

/** Sent: the code or link it carried is no longer kept. */
export async function markSent(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE notification_outbox SET state = 'sent', "values" = NULL, last_error = NULL, finished_at = now() WHERE id = $1`, [id]);
}

/** Failed this time: tried again after `delaySeconds`. */
export async function scheduleRetry(db: Queryable, id: string, delaySeconds: number, error: string): Promise<void> {
  await db.query(`UPDATE notification_outbox SET next_attempt_at = now() + make_interval(secs => $2), last_error = $3 WHERE id = $1`, [
    id,
    delaySeconds,
    error,
  ]);
}

/** Given up, in the write that records the failure; the code or link is no longer kept. */
export async function markFailed(write: Write, id: string, error: string): Promise<void> {
  await write.tx.query(`UPDATE notification_outbox SET state = 'failed', "values" = NULL, last_error = $2, finished_at = $3 WHERE id = $1`, [
    id,
    error,
    write.at,
  ]);
}

/** Finished messages (no longer carrying anything secret) kept this long for inspection, then deleted. */
export async function deleteFinishedMessages(db: Queryable, olderThanSeconds: number): Promise<number> {
  const result = await db.query(`DELETE FROM notification_outbox WHERE state <> 'pending' AND finished_at < now() - make_interval(secs => $1)`, [
    olderThanSeconds,
  ]);
  return result.rowCount;
}
