import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

/** The feature flags of the instance (docs/api/features.md); each is off until set. */
export const INSTANCE_FEATURES = ['oidcTokenExchange'] as const;
export type FeatureName = (typeof INSTANCE_FEATURES)[number];

export interface FeatureState {
  instanceId: string;
  flags: Map<string, boolean>;
  /** Of the latest feature change, or of the instance when no flag was ever set. */
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

export async function featureState(db: Queryable): Promise<FeatureState | undefined> {
  const { rows: instances } = await db.query<{ id: string; sequence: string; creation_date: Date; change_date: Date }>(
    'SELECT id, sequence::text AS sequence, creation_date, change_date FROM instance LIMIT 1',
  );
  const instance = instances[0];
  if (!instance) return undefined;
  const { rows } = await db.query<{ name: string; enabled: boolean; sequence: string; change_date: Date }>(
    'SELECT name, enabled, sequence::text AS sequence, change_date FROM instance_features f ORDER BY f.sequence DESC',
  );
  const latest = rows[0];
  return {
    instanceId: instance.id,
    flags: new Map(rows.map((row) => [row.name, row.enabled])),
    sequence: latest?.sequence ?? instance.sequence,
    creationDate: instance.creation_date,
    changeDate: latest?.change_date ?? instance.change_date,
  };
}

export async function featureEnabled(db: Queryable, name: FeatureName): Promise<boolean> {
  const { rows } = await db.query<{ enabled: boolean }>('SELECT enabled FROM instance_features WHERE name = $1', [name]);
  return rows[0]?.enabled ?? false;
}

export async function setFeature(write: Write, feature: { instanceId: string; name: FeatureName; enabled: boolean }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'instance',
    aggregateId: feature.instanceId,
    type: 'instance.feature.set',
    resourceOwner: feature.instanceId,
    payload: { feature: feature.name, enabled: feature.enabled },
  });
  await write.tx.query(
    `INSERT INTO instance_features (name, enabled, sequence, change_date) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) DO UPDATE SET enabled = EXCLUDED.enabled, sequence = EXCLUDED.sequence, change_date = EXCLUDED.change_date`,
    [feature.name, feature.enabled, sequence, write.at],
  );
}
