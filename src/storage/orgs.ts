import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

export interface OrgRow {
  id: string;
  name: string;
  state: string;
  primary_domain: string;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

/** Adds an org with its primary domain. */
export async function addOrg(write: Write, org: { id: string; name: string; domain: string }): Promise<void> {
  await write.append({ aggregateType: 'org', aggregateId: org.id, type: 'org.added', resourceOwner: org.id, payload: { name: org.name } });
  await write.append({ aggregateType: 'org', aggregateId: org.id, type: 'org.domain.added', resourceOwner: org.id, payload: { domain: org.domain } });
  const sequence = await write.append({
    aggregateType: 'org',
    aggregateId: org.id,
    type: 'org.domain.primary.set',
    resourceOwner: org.id,
    payload: { domain: org.domain },
  });
  await write.tx.query('INSERT INTO orgs (id, name, sequence, creation_date, change_date) VALUES ($1, $2, $3, $4, $4)', [org.id, org.name, sequence, write.at]);
  await write.tx.query('INSERT INTO org_domains (domain, org_id, is_primary, is_verified) VALUES ($1, $2, true, true)', [org.domain, org.id]);
}

export async function domainTaken(db: Queryable, domain: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM org_domains WHERE domain = $1', [domain]);
  return rows.length > 0;
}

export async function findOrg(db: Queryable, id: string): Promise<OrgRow | undefined> {
  const { rows } = await db.query<OrgRow>(
    `SELECT o.id, o.name, o.state, d.domain AS primary_domain, o.sequence::text AS sequence, o.creation_date, o.change_date
       FROM orgs o JOIN org_domains d ON d.org_id = o.id AND d.is_primary
      WHERE o.id = $1`,
    [id],
  );
  return rows[0];
}

export async function renameOrg(write: Write, org: { id: string; name: string }): Promise<void> {
  const sequence = await write.append({ aggregateType: 'org', aggregateId: org.id, type: 'org.changed', resourceOwner: org.id, payload: { name: org.name } });
  await write.tx.query('UPDATE orgs SET name = $2, sequence = $3, change_date = $4 WHERE id = $1', [org.id, org.name, sequence, write.at]);
}

/**
 * Sets an org's state with its event (`org.deactivated`, `org.reactivated`);
 * false, writing nothing, when the org is not in the state `from`.
 */
export async function changeOrgState(write: Write, org: { id: string; from: string; to: string; event: string }): Promise<boolean> {
  const { rows } = await write.tx.query<{ state: string }>('SELECT state FROM orgs WHERE id = $1 FOR UPDATE', [org.id]);
  if (rows[0]?.state !== org.from) return false;
  const sequence = await write.append({ aggregateType: 'org', aggregateId: org.id, type: org.event, resourceOwner: org.id, payload: {} });
  await write.tx.query('UPDATE orgs SET state = $2, sequence = $3, change_date = $4 WHERE id = $1', [org.id, org.to, sequence, write.at]);
  return true;
}
