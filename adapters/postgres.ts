import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Database, Queryable } from '../src/storage/database.ts';

interface RecordRow {
  payload: AdapterPayload;
  consumed: number | null;
}

// Expiry is checked in SQL, not by deleting on read: a record past its
// `expires_at` is invisible at once, and the sweeper removes it later.
// `consumed` is whole unix seconds, cast to float8 so both drivers return a
// plain number (bigint and numeric come back as strings or BigInt).
const FIND_BY_ID = `
  SELECT payload, floor(extract(epoch FROM consumed_at))::float8 AS consumed
    FROM engine_records
   WHERE model = $1 AND id = $2 AND (expires_at IS NULL OR expires_at > now())`;

// A record and, in the same statement, the live grant it belongs to (a
// refresh token and its grant, which the engine reads one after the other).
const FIND_WITH_GRANT = `
  SELECT r.payload, floor(extract(epoch FROM r.consumed_at))::float8 AS consumed,
         g.payload AS grant_payload, floor(extract(epoch FROM g.consumed_at))::float8 AS grant_consumed
    FROM engine_records r
    LEFT JOIN engine_records g
      ON g.model = 'Grant' AND g.id = r.grant_id AND (g.expires_at IS NULL OR g.expires_at > now())
   WHERE r.model = $1 AND r.id = $2 AND (r.expires_at IS NULL OR r.expires_at > now())`;

const FIND_BY_UID = `
  SELECT payload, floor(extract(epoch FROM consumed_at))::float8 AS consumed
    FROM engine_records
   WHERE model = $1 AND uid = $2 AND (expires_at IS NULL OR expires_at > now())
   LIMIT 1`;

const FIND_BY_USER_CODE = `
  SELECT payload, floor(extract(epoch FROM consumed_at))::float8 AS consumed
    FROM engine_records
   WHERE model = $1 AND user_code = $2 AND (expires_at IS NULL OR expires_at > now())
   LIMIT 1`;

// An upsert replaces the whole record, consumption included, as the engine
// expects from a save: whatever it re-saves is the new truth.
const UPSERT = `
  INSERT INTO engine_records (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
  VALUES ($1, $2, $3::jsonb, $4, $5, $6, now() + $7::float8 * interval '1 second', NULL)
  ON CONFLICT (model, id) DO UPDATE SET
    payload = EXCLUDED.payload,
    grant_id = EXCLUDED.grant_id,
    uid = EXCLUDED.uid,
    user_code = EXCLUDED.user_code,
    expires_at = EXCLUDED.expires_at,
    consumed_at = NULL`;

// Writes only where no live record is stored (an expired one the sweeper has
// not deleted yet is replaced): a row comes back only for the writer.
const CLAIM = `
  INSERT INTO engine_records (model, id, payload, expires_at)
  VALUES ($1, $2, $3::jsonb, now() + $4::float8 * interval '1 second')
  ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at, consumed_at = NULL
    WHERE engine_records.expires_at <= now()
  RETURNING id`;

// A refresh token's rotation (RFC 6749 10.4, RFC 9700 4.14.2) as one
// statement: the presented token is consumed and its successor written
// only if that token was not consumed yet. Of two requests rotating the
// same token at once, the row lock lets exactly one through; the other
// gets no row back.
const ROTATE = `
  WITH consumed AS (
    UPDATE engine_records SET consumed_at = now()
     WHERE model = $1 AND id = $8 AND consumed_at IS NULL
    RETURNING id)
  INSERT INTO engine_records (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
  SELECT $1, $2, $3::jsonb, $4, $5, $6, now() + $7::float8 * interval '1 second', NULL
    FROM consumed
  RETURNING id`;

const CONSUME = 'UPDATE engine_records SET consumed_at = now() WHERE model = $1 AND id = $2';

const DESTROY = 'DELETE FROM engine_records WHERE model = $1 AND id = $2';

const REVOKE_BY_GRANT_ID = 'DELETE FROM engine_records WHERE model = $1 AND grant_id = $2';

// The batch is picked by ctid (a TID scan, no second index lookup). The outer
// expiry test is not redundant: PostgreSQL re-evaluates it on the newest
// version of a row that a concurrent upsert renewed, so that row survives.
const DELETE_EXPIRED = `
  DELETE FROM engine_records
   WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM engine_records WHERE expires_at <= now() LIMIT $1))
     AND expires_at <= now()`;

function toPayload(row: RecordRow | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  // The engine only tests `consumed` for truthiness; the time is kept for audit.
  return row.consumed === null ? row.payload : { ...row.payload, consumed: row.consumed };
}

/**
 * oidc-provider storage in the `engine_records` table. Each adapter owns the
 * rows of one model; the model is part of every key and every statement.
 */
export class PostgresAdapter implements Adapter {
  readonly model: string;
  readonly db: Database;

  constructor(model: string, db: Database) {
    this.model = model;
    this.db = db;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    await this.db.query(UPSERT, this.upsertValues(id, payload, expiresIn));
  }

  private upsertValues(id: string, payload: AdapterPayload, expiresIn?: number): unknown[] {
    return [this.model, id, JSON.stringify(payload), payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresIn || null];
  }

  /** Writes the record only if no live one is stored under `id`, atomically: true when this call wrote it (replay detection). */
  async claim(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean> {
    const { rows } = await this.db.query(CLAIM, [this.model, id, JSON.stringify(payload), expiresIn]);
    return rows.length === 1;
  }

  /**
   * Consumes the record `consumedId` and writes `id` in one atomic step:
   * true when both happened, false (and nothing written) when `consumedId`
   * was already consumed or is not stored.
   */
  async rotate(consumedId: string, id: string, payload: AdapterPayload, expiresIn?: number): Promise<boolean> {
    if (!storable(consumedId)) return false;
    const { rows } = await this.db.query(ROTATE, [...this.upsertValues(id, payload, expiresIn), consumedId]);
    return rows.length === 1;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.findOne(FIND_BY_ID, id);
  }

  /** The record and the grant it names (when that grant is stored here, in PostgreSQL), in one round trip. */
  async findWithGrant(id: string): Promise<{ record?: AdapterPayload; grant?: AdapterPayload }> {
    if (!storable(id)) return {};
    const { rows } = await this.db.query<RecordRow & { grant_payload: AdapterPayload | null; grant_consumed: number | null }>(FIND_WITH_GRANT, [
      this.model,
      id,
    ]);
    const row = rows[0];
    if (!row) return {};
    const grant = row.grant_payload === null ? undefined : toPayload({ payload: row.grant_payload, consumed: row.grant_consumed });
    return { record: toPayload(row), grant };
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findOne(FIND_BY_UID, uid);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findOne(FIND_BY_USER_CODE, userCode);
  }

  async consume(id: string): Promise<void> {
    if (storable(id)) await this.db.query(CONSUME, [this.model, id]);
  }

  async destroy(id: string): Promise<void> {
    if (storable(id)) await this.db.query(DESTROY, [this.model, id]);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db.query(REVOKE_BY_GRANT_ID, [this.model, grantId]);
  }

  private async findOne(sql: string, value: string): Promise<AdapterPayload | undefined> {
    if (!storable(value)) return undefined;
    const { rows } = await this.db.query<RecordRow>(sql, [this.model, value]);
    return toPayload(rows[0]);
  }
}

/**
 * Ids come from callers (tokens, codes, cookies): one PostgreSQL cannot hold
 * in text (NUL) names no record, rather than failing the query.
 */
function storable(id: string): boolean {
  return typeof id === 'string' && !id.includes('\u0000');
}

/**
 * Deletes up to `limit` expired records and returns how many went. Bounded so
 * a sweeper run after a long outage holds locks briefly; call it again while
 * it returns `limit`.
 */
export async function deleteExpiredEngineRecords(db: Queryable, limit = 1000): Promise<number> {
  const { rowCount } = await db.query(DELETE_EXPIRED, [limit]);
  return rowCount;
}

/**
 * Deletes expired records batch after batch until none is left, so a node
 * without Redis (every short-lived record in PostgreSQL) never falls behind
 * however many expire between two sweeps. Each batch is its own statement:
 * no long lock, and other queries get their turn in between.
 */
export async function sweepExpiredEngineRecords(db: Queryable, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteExpiredEngineRecords(db, batch);
    total += deleted;
    if (deleted < batch) return total;
  }
}
