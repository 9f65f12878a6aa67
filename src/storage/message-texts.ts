import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import type { MessageTexts } from '../domain/message-texts.ts';

// Orgs' own message texts (migration 0035), each with its events in the
// caller's write: `org.text.message.set`, `org.text.message.removed`.

export interface StoredMessageTexts {
  texts: Partial<MessageTexts>;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

export interface MessageTextKey {
  orgId: string;
  type: string;
  language: string;
}

export async function findMessageTexts(db: Queryable, key: MessageTextKey): Promise<StoredMessageTexts | undefined> {
  const { rows } = await db.query<StoredMessageTexts>(
    `SELECT texts, sequence::text AS sequence, creation_date, change_date FROM message_texts WHERE org_id = $1 AND message_type = $2 AND language = $3`,
    [key.orgId, key.type, key.language],
  );
  return rows[0];
}

export async function putMessageTexts(write: Write, key: MessageTextKey, texts: Partial<MessageTexts>): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'org',
    aggregateId: key.orgId,
    type: 'org.text.message.set',
    resourceOwner: key.orgId,
    payload: { messageType: key.type, language: key.language, ...texts },
  });
  await write.tx.query(
    `INSERT INTO message_texts (org_id, message_type, language, texts, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (org_id, message_type, language) DO UPDATE SET texts = EXCLUDED.texts, sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [key.orgId, key.type, key.language, JSON.stringify(texts), sequence, write.at],
  );
}

/** False when the org had no texts of its own for the key. */
export async function removeMessageTexts(write: Write, key: MessageTextKey): Promise<boolean> {
  const removed = await write.tx.query('DELETE FROM message_texts WHERE org_id = $1 AND message_type = $2 AND language = $3', [
    key.orgId,
    key.type,
    key.language,
  ]);
  if (removed.rowCount === 0) return false;
  await write.append({
    aggregateType: 'org',
    aggregateId: key.orgId,
    type: 'org.text.message.removed',
    resourceOwner: key.orgId,
    payload: { messageType: key.type, language: key.language },
  });
  return true;
}
