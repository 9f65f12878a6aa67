import type { TargetType } from '../domain/actions.ts';
import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

/** A target as stored, its signing key still sealed. */
export interface StoredTarget {
  id: string;
  name: string;
  endpoint: string;
  timeoutMs: number;
  type: TargetType;
  interruptOnError: boolean;
  signingKeySealed: Buffer;
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

export type TargetChange = Pick<StoredTarget, 'name' | 'endpoint' | 'timeoutMs' | 'type' | 'interruptOnError'>;

/** What a signing key's seal is bound to (src/keys/sealing.ts): its own target. */
export function signingKeyAad(targetId: string): string {
  return `action_targets.signing_key:${targetId}`;
}

interface Row {
  id: string;
  name: string;
  endpoint: string;
  timeout_ms: number;
  target_type: TargetType;
  interrupt_on_error: boolean;
  signing_key_sealed: Buffer | Uint8Array;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

const COLUMNS = `id, name, endpoint, timeout_ms, target_type, interrupt_on_error, signing_key_sealed, sequence::text AS sequence, creation_date, change_date`;

function toTarget(row: Row): StoredTarget {
  return {
    id: row.id,
    name: row.name,
    endpoint: row.endpoint,
    timeoutMs: Number(row.timeout_ms),
    type: row.target_type,
    interruptOnError: row.interrupt_on_error,
    signingKeySealed: Buffer.from(row.signing_key_sealed),
    sequence: row.sequence,
    creationDate: new Date(row.creation_date),
    changeDate: new Date(row.change_date),
  };
}

export async function findTarget(db: Queryable, id: string): Promise<StoredTarget | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM action_targets WHERE id = $1`, [id]);
  return rows[0] && toTarget(rows[0]);
}

export async function findTargets(db: Queryable, ids: string[]): Promise<StoredTarget[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM action_targets WHERE id = ANY($1::text[])`, [ids]);
  return rows.map(toTarget);
}

export async function targetNameTaken(db: Queryable, name: string, exceptId: string | null): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM action_targets WHERE name = $1 AND id IS DISTINCT FROM $2::text', [name, exceptId]);
  return rows.length > 0;
}

/** One page of targets by name, and how many there are. */
export async function listTargets(db: Queryable, page: { offset: number; limit: number; asc: boolean }): Promise<{ total: number; rows: StoredTarget[] }> {
  const count = await db.query<{ total: string }>('SELECT count(*)::text AS total FROM action_targets');
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM action_targets ORDER BY name ${page.asc ? 'ASC' : 'DESC'}, id LIMIT $1 OFFSET $2`, [
    page.limit,
    page.offset,
  ]);
  return { total: Number(count.rows[0]!.total), rows: rows.map(toTarget) };
}

/** The event never carries the signing key; the target's delivery cursor starts at its creation. */
export async function insertTarget(write: Write, instanceId: string, id: string, target: TargetChange, signingKeySealed: Buffer): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'action',
    aggregateId: id,
    type: 'action.target.added',
    resourceOwner: instanceId,
    payload: { ...target },
  });
  await write.tx.query(
    `INSERT INTO action_targets (id, name, endpoint, timeout_ms, target_type, interrupt_on_error, signing_key_sealed, sequence, creation_date, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
    [id, target.name, target.endpoint, target.timeoutMs, target.type, target.interruptOnError, signingKeySealed, sequence, write.at],
  );
  await write.tx.query('INSERT INTO action_deliveries (target_id, sequence) VALUES ($1, $2)', [id, sequence]);
}

export async function updateTarget(write: Write, instanceId: string, id: string, target: TargetChange): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'action',
    aggregateId: id,
    type: 'action.target.changed',
    resourceOwner: instanceId,
    payload: { ...target },
  });
  await write.tx.query(
    `UPDATE action_targets SET name = $2, endpoint = $3, timeout_ms = $4, target_type = $5, interrupt_on_error = $6, sequence = $7, change_date = $8 WHERE id = $1`,
    [id, target.name, target.endpoint, target.timeoutMs, target.type, target.interruptOnError, sequence, write.at],
  );
}

/** Removes the target, its place in every execution (an execution left without targets goes too) and its delivery state. */
export async function deleteTarget(write: Write, instanceId: string, id: string): Promise<void> {
  await write.append({ aggregateType: 'action', aggregateId: id, type: 'action.target.removed', resourceOwner: instanceId });
  await write.tx.query('DELETE FROM action_targets WHERE id = $1', [id]);
  await write.tx.query('DELETE FROM action_executions x WHERE NOT EXISTS (SELECT 1 FROM action_execution_targets t WHERE t.condition_key = x.condition_key)');
}
