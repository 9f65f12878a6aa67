import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { pageOf, type PageRequest, type SearchResult } from '../domain/search.ts';
import type { Queryable } from '../storage/database.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { findMetadata, listMetadata, type MetadataEntry } from '../storage/user-metadata.ts';
import { managedUser } from './get-user.ts';

/** One key of a user's metadata on the wire: the value in base64. */
export interface MetadataView {
  details: WriteDetails;
  key: string;
  value: string;
}

function view(entry: MetadataEntry, orgId: string): MetadataView {
  return {
    details: readDetails({ sequence: entry.sequence, creation_date: entry.creationDate, change_date: entry.changeDate }, orgId),
    key: entry.key,
    value: entry.value.toString('base64'),
  };
}

export async function getUserMetadata(db: Queryable, actor: Principal, orgId: string, userId: string, key: string): Promise<{ metadata: MetadataView }> {
  const user = await managedUser(db, actor, orgId, userId);
  const entry = await findMetadata(db, user.id, key);
  if (!entry) throw new NotFound('the user has no metadata of this key');
  return { metadata: view(entry, orgId) };
}

export async function searchUserMetadata(
  db: Queryable,
  actor: Principal,
  orgId: string,
  userId: string,
  request: { query?: PageRequest },
): Promise<SearchResult<MetadataView>> {
  const user = await managedUser(db, actor, orgId, userId);
  const { total, rows } = await listMetadata(db, user.id, pageOf(request.query));
  return { details: { totalResult: String(total), viewTimestamp: new Date().toISOString() }, result: rows.map((row) => view(row, orgId)) };
}
