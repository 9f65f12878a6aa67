import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export interface MetadataEntry {
  key: string;
  value: Buffer;
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

interface Row {
  key: string;
  value: Buffer | Uint8Array;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

const toEntry = (row: Row): MetadataEntry => ({
  key: row.key,
  value: Buffer.from(row.value),
  sequence: row.sequence,
  creationDate: new Date(row.creation_date),
  changeDate: new Date(row.change_date),
});

const COLUMNS = 'key, value, sequence::text AS sequence, creation_date, change_date';

/** Sets one key; the event names the key, never the value (the log is kept for good). */
export async function saveMetadata(write: Write, user: { id: string; orgId: string }, key: string, value: Buffer): Promise<void> {
  const sequence = await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.metadata.set', resourceOwner: user.orgId, payload: { key } });
  await write.tx.query(
    `INSERT INTO user_metadata (user_id, key, value, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value, sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [user.id, key, value, sequence, write.at],
  );
}

/** Removes one key; answers whether it was there. */
export async function deleteMetadata(write: Write, user: { id: string; orgId: string }, key: string): Promise<boolean> {
  const { rows } = await write.tx.query('DELETE FROM user_metadata WHERE user_id = $1 AND key = $2 RETURNING key', [user.id, key]);
  if (!rows.length) return false;
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.metadata.removed', resourceOwner: user.orgId, payload: { key } });
  return true;
}

export async function findMetadata(db: Queryable, userId: string, key: string): Promise<MetadataEntry | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM user_metadata WHERE user_id = $1 AND key = $2`, [userId, key]);
  return rows[0] && toEntry(rows[0]);
}

export async function countMetadata(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ total: string }>('SELECT count(*)::text AS total FROM user_metadata WHERE user_id = $1', [userId]);
  return Number(rows[0]!.total);
}

/** One page of a user's metadata by key, and how many keys there are. */
export async function listMetadata(
  db: Queryable,
  userId: string,
  page: { offset: number; limit: number; asc: boolean },
): Promise<{ total: number; rows: MetadataEntry[] }> {
  const total = await countMetadata(db, userId);
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM user_metadata WHERE user_id = $1 ORDER BY key ${page.asc ? 'ASC' : 'DESC'} LIMIT $2 OFFSET $3`, [
    userId,
    page.limit,
    page.offset,
  ]);
  return { total, rows: rows.map(toEntry) };
}

/** Every key of a user with its value in base64: the metadata claim. */
export async function metadataClaimOf(db: Queryable, userId: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ key: string; value: Buffer | Uint8Array }>('SELECT key, value FROM user_metadata WHERE user_id = $1 ORDER BY key', [
    userId,
  ]);
  return Object.fromEntries(rows.map((row) => [row.key, Buffer.from(row.value).toString('base64')]));
}
