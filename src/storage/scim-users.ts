import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import { Conditions, pagedRows } from './search.ts';
import { userFilterSql, userSortSql } from './scim-filter-sql.ts';
import type { AttrPath, Filter } from '../domain/scim/filter.ts';

// The human users of an org as SCIM sees them (docs/scim.md): reads with
// the filter, sort and page of RFC 7644 3.4.2, and the two writes only
// SCIM makes — the client's externalId and the email address.

export interface ScimUserRow {
  id: string;
  user_name: string;
  external_id: string | null;
  first_name: string | null;
  last_name: string | null;
  display_name: string | null;
  nick_name: string | null;
  preferred_language: string | null;
  email: string | null;
  state: string;
  creation_date: Date;
  change_date: Date;
  /** bigint: the position of the user's last event. */
  sequence: string;
}

const COLUMNS = `u.id, u.user_name, u.external_id, u.first_name, u.last_name, u.display_name, u.nick_name, u.preferred_language,
  u.email, u.state, u.creation_date, u.change_date, u.sequence`;

/** A human user of the org; `forUpdate` holds its row until the transaction ends. */
export async function findScimUser(db: Queryable, orgId: string, id: string, forUpdate = false): Promise<ScimUserRow | undefined> {
  const { rows } = await db.query<ScimUserRow>(
    `SELECT ${COLUMNS} FROM users u WHERE u.id = $1 AND u.org_id = $2 AND u.type = 'human'${forUpdate ? ' FOR UPDATE' : ''}`,
    [id, orgId],
  );
  return rows[0];
}

export interface ScimListQuery {
  filter?: Filter;
  sortBy?: AttrPath;
  ascending: boolean;
  /** Rows to skip: startIndex - 1. */
  offset: number;
  limit: number;
}

/** One page of the org's human users matching the filter, in a total order (the sort attribute, then the id), and how many match. */
export function listScimUsers(db: Queryable, orgId: string, query: ScimListQuery): Promise<{ total: number; rows: ScimUserRow[] }> {
  const conditions = new Conditions();
  conditions.add(`u.org_id = ${conditions.param(orgId)}`).add(`u.type = 'human'`);
  if (query.filter) conditions.add(userFilterSql(query.filter, conditions));
  const order = query.sortBy ? userSortSql(query.sortBy) : '(lower(u.user_name) COLLATE "C")';
  return pagedRows<ScimUserRow>(db, {
    columns: COLUMNS,
    table: 'users u',
    conditions,
    orderBy: [order, 'u.id'],
    page: { offset: query.offset, limit: query.limit, asc: query.ascending },
  });
}

/** Whether another user of the org already carries this externalId (the unique index of migration 0055). */
export async function externalIdTakenByOther(db: Queryable, orgId: string, externalId: string, userId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM users WHERE org_id = $1 AND external_id = $2 AND id <> $3', [orgId, externalId, userId]);
  return rows.length > 0;
}

type UserRef = { id: string; orgId: string };

/** The provisioning client's identifier of the user (RFC 7643 3.1), or none. */
export async function changeExternalId(write: Write, user: UserRef, externalId: string | null): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.external_id.changed',
    resourceOwner: user.orgId,
    payload: { externalId },
  });
  await write.tx.query('UPDATE users SET external_id = $2, sequence = $3, change_date = $4 WHERE id = $1', [user.id, externalId, sequence, write.at]);
}

/** A new email address, as verified: the org's own directory vouches for it (docs/decisions.md, SCIM). */
export async function changeEmail(write: Write, user: UserRef, email: string): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.email.changed',
    resourceOwner: user.orgId,
    payload: { email, isEmailVerified: true },
  });
  await write.tx.query('UPDATE users SET email = $2, email_verified = true, sequence = $3, change_date = $4 WHERE id = $1', [
    user.id,
    email,
    sequence,
    write.at,
  ]);
}
