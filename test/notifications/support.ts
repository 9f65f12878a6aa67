import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../../src/logger.ts';
import type { Database } from '../../src/storage/database.ts';
import { beginWrite } from '../../src/storage/event-log.ts';
import { enqueueMessage, type NewMessage } from '../../src/storage/outbox.ts';

// Until the login flows that send mails exist, tests queue messages through
// the outbox module itself, in a write with the event that causes them, as
// those flows will.

export function message(overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    type: 'PasswordReset',
    recipient: 'ada@example.test',
    language: 'en',
    values: { Code: 'K7Q2M9X4', UserName: 'ada@example.test', FirstName: 'Ada', OrgName: 'Example' },
    userId: 'user-ada',
    orgId: 'org-example',
    ...overrides,
  };
}

/** Queues `messages` in one write with an event, as a command would; answers their ids. */
export function enqueue(db: Database, ...messages: NewMessage[]): Promise<string[]> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    await write.append({ aggregateType: 'user', aggregateId: messages[0]!.userId, type: 'user.test.mail.requested', resourceOwner: messages[0]!.orgId });
    const ids: string[] = [];
    for (const m of messages) ids.push(await enqueueMessage(write, m));
    return ids;
  });
}

/** A logger writing into memory, for tests that read what was logged. */
export function memoryLogger(): { log: Logger; text(): string } {
  let text = '';
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
  ) as unknown as Logger;
  return { log, text: () => text };
}

export interface OutboxRow {
  id: string;
  state: string;
  attempts: number;
  values: unknown;
  last_error: string | null;
}

export async function outboxRows(db: Database): Promise<OutboxRow[]> {
  const { rows } = await db.query<OutboxRow>(`SELECT id::text AS id, state, attempts, "values", last_error FROM notification_outbox ORDER BY id`);
  return rows;
}
