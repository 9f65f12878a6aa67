import type { IdpConfig, ProviderOptions } from '../domain/idps.ts';
import type { Page, TextMatch } from '../domain/search.ts';
import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import { Conditions, pagedRows } from './search.ts';

// External identity providers (migration 0046): instance-level ones have
// org_id NULL. Events never carry the client secret.

export interface StoredIdp {
  id: string;
  orgId: string | null;
  /** The kind's type (IDP_TYPE_…). */
  kind: string;
  name: string;
  config: IdpConfig;
  options: ProviderOptions;
  secretSealed: Buffer | null;
  sequence: string;
  creationDate: Date;
  changeDate: Date;
}

/** What the client secret's seal is bound to (src/keys/sealing.ts): the provider it belongs to. */
export const idpSecretAad = (idpId: string): string => `identity_providers.client_secret.${idpId}`;

interface Row {
  id: string;
  org_id: string | null;
  kind: string;
  name: string;
  config: IdpConfig | string;
  options: ProviderOptions | string;
  secret_sealed: Buffer | Uint8Array | null;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

const COLUMNS = 'i.id, i.org_id, i.kind, i.name, i.config, i.options, i.secret_sealed, i.sequence::text AS sequence, i.creation_date, i.change_date';

const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

function fromRow(row: Row): StoredIdp {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    name: row.name,
    config: json(row.config),
    options: json(row.options),
    secretSealed: row.secret_sealed ? Buffer.from(row.secret_sealed) : null,
    sequence: row.sequence,
    creationDate: new Date(row.creation_date),
    changeDate: new Date(row.change_date),
  };
}

export async function findIdp(db: Queryable, id: string): Promise<StoredIdp | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM identity_providers i WHERE i.id = $1`, [id]);
  return rows[0] && fromRow(rows[0]);
}

export interface IdpWrite {
  id: string;
  orgId: string | null;
  kind: string;
  name: string;
  config: IdpConfig;
  options: ProviderOptions;
  secretSealed: Buffer | null;
}

function idpEvent(write: Write, idp: IdpWrite, action: 'added' | 'changed' | 'removed', instanceId: string): Promise<string> {
  const owner = idp.orgId ?? instanceId;
  return write.append({
    aggregateType: idp.orgId ? 'org' : 'instance',
    aggregateId: owner,
    type: `${idp.orgId ? 'org' : 'instance'}.idp.${action}`,
    resourceOwner: owner,
    payload: action === 'removed' ? { idpId: idp.id } : { idpId: idp.id, type: idp.kind, name: idp.name, config: idp.config, providerOptions: idp.options },
  });
}

export async function insertIdp(write: Write, idp: IdpWrite, instanceId: string): Promise<void> {
  const sequence = await idpEvent(write, idp, 'added', instanceId);
  await write.tx.query(
    `INSERT INTO identity_providers (id, org_id, kind, name, config, options, secret_sealed, sequence, creation_date, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
    [idp.id, idp.orgId, idp.kind, idp.name, JSON.stringify(idp.config), JSON.stringify(idp.options), idp.secretSealed, sequence, write.at],
  );
}

export async function updateIdp(write: Write, idp: IdpWrite, instanceId: string): Promise<void> {
  const sequence = await idpEvent(write, idp, 'changed', instanceId);
  await write.tx.query(
    `UPDATE identity_providers SET name = $2, config = $3, options = $4, secret_sealed = $5, sequence = $6, change_date = $7 WHERE id = $1`,
    [idp.id, idp.name, JSON.stringify(idp.config), JSON.stringify(idp.options), idp.secretSealed, sequence, write.at],
  );
}

/** Removes the provider; its links and its places in login policies go with it (ON DELETE CASCADE). */
export async function deleteIdp(write: Write, idp: IdpWrite, instanceId: string): Promise<void> {
  await idpEvent(write, idp, 'removed', instanceId);
  await write.tx.query('DELETE FROM identity_providers WHERE id = $1', [idp.id]);
}

/** The instance's providers (`orgId` null), or an org's own together with the instance's. */
export async function searchIdps(db: Queryable, orgId: string | null, names: TextMatch[], page: Page): Promise<{ total: number; rows: StoredIdp[] }> {
  const conditions = new Conditions();
  conditions.add(orgId === null ? 'i.org_id IS NULL' : `(i.org_id IS NULL OR i.org_id = ${conditions.param(orgId)})`);
  for (const name of names) conditions.text('i.name', name);
  const { total, rows } = await pagedRows<Row>(db, {
    columns: COLUMNS,
    table: 'identity_providers i',
    conditions,
    orderBy: ['(lower(i.name) COLLATE "C")', 'i.id'],
    page,
  });
  return { total, rows: rows.map(fromRow) };
}
