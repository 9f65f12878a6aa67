import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

/** An execution: a condition and its targets in the order they are called. */
export interface StoredExecution {
  conditionKey: string;
  targetIds: string[];
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

/**
 * Sets the targets of one condition (none removes the execution). A target
 * that was already there keeps the point its deliveries started from; a new
 * one starts after this write's event, so it gets only later events.
 */
export async function saveExecution(write: Write, instanceId: string, conditionKey: string, targetIds: string[]): Promise<boolean> {
  const existed = (await write.tx.query('SELECT 1 FROM action_executions WHERE condition_key = $1', [conditionKey])).rows.length > 0;
  if (!targetIds.length && !existed) return false;
  const sequence = await write.append({
    aggregateType: 'action',
    aggregateId: conditionKey,
    type: targetIds.length ? 'action.execution.set' : 'action.execution.removed',
    resourceOwner: instanceId,
    payload: targetIds.length ? { targets: targetIds } : {},
  });
  await write.tx.query('DELETE FROM action_execution_targets WHERE condition_key = $1 AND NOT (target_id = ANY($2::text[]))', [conditionKey, targetIds]);
  if (!targetIds.length) {
    await write.tx.query('DELETE FROM action_executions WHERE condition_key = $1', [conditionKey]);
    return true;
  }
  await write.tx.query(
    `INSERT INTO action_execution_targets (condition_key, target_id, position, since_sequence)
     SELECT $1, target_id, ord::integer, $3 FROM unnest($2::text[]) WITH ORDINALITY AS t(target_id, ord)
     ON CONFLICT (condition_key, target_id) DO UPDATE SET position = EXCLUDED.position`,
    [conditionKey, targetIds, sequence],
  );
  await write.tx.query(
    `INSERT INTO action_executions (condition_key, sequence, creation_date, change_date) VALUES ($1, $2, $3, $3)
     ON CONFLICT (condition_key) DO UPDATE SET sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [conditionKey, sequence, write.at],
  );
  return true;
}

interface Row {
  condition_key: string;
  target_ids: string[] | null;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

const SELECT = `SELECT x.condition_key, x.sequence::text AS sequence, x.creation_date, x.change_date,
  (SELECT array_agg(t.target_id ORDER BY t.position) FROM action_execution_targets t WHERE t.condition_key = x.condition_key) AS target_ids
  FROM action_executions x`;

function toExecution(row: Row): StoredExecution {
  return {
    conditionKey: row.condition_key,
    targetIds: row.target_ids ?? [],
    sequence: row.sequence,
    creationDate: new Date(row.creation_date),
    changeDate: new Date(row.change_date),
  };
}

/** One page of executions by condition, and how many there are. */
export async function listExecutions(
  db: Queryable,
  page: { offset: number; limit: number; asc: boolean },
): Promise<{ total: number; rows: StoredExecution[] }> {
  const count = await db.query<{ total: string }>('SELECT count(*)::text AS total FROM action_executions');
  const { rows } = await db.query<Row>(`${SELECT} ORDER BY x.condition_key ${page.asc ? 'ASC' : 'DESC'} LIMIT $1 OFFSET $2`, [page.limit, page.offset]);
  return { total: Number(count.rows[0]!.total), rows: rows.map(toExecution) };
}

/** The executions of the token hooks (conditions `function:*`), for the per-node cache. */
export async function functionExecutions(db: Queryable): Promise<StoredExecution[]> {
  const { rows } = await db.query<Row>(`${SELECT} WHERE x.condition_key LIKE 'function:%'`);
  return rows.map(toExecution);
}

/** Whether the target is called by a token hook (it must then stay a restCall target). */
export async function servesFunction(db: Queryable, targetId: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM action_execution_targets WHERE target_id = $1 AND condition_key LIKE 'function:%'", [targetId]);
  return rows.length > 0;
}
