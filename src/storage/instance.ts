import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export interface InstanceRow {
  id: string;
  default_org_id: string;
}

export async function findInstance(db: Queryable): Promise<InstanceRow | undefined> {
  const { rows } = await db.query<InstanceRow>('SELECT id, default_org_id FROM instance LIMIT 1');
  return rows[0];
}

export async function addInstance(write: Write, instance: { id: string; defaultOrgId: string }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'instance',
    aggregateId: instance.id,
    type: 'instance.added',
    resourceOwner: instance.id,
    payload: { defaultOrgId: instance.defaultOrgId },
  });
  await write.tx.query('INSERT INTO instance (id, default_org_id, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $4)', [
    instance.id,
    instance.defaultOrgId,
    sequence,
    write.at,
  ]);
}
