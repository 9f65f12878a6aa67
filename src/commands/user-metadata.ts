import { NotFound, fieldError } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { MAX_METADATA_KEYS } from '../domain/user-metadata.ts';
import { managedUser } from '../queries/get-user.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { countMetadata, deleteMetadata, findMetadata, saveMetadata } from '../storage/user-metadata.ts';

/** `POST /management/v1/users/{userId}/metadata/{key}`: sets the key's value (bytes, already decoded from base64). */
export async function setUserMetadata(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  key: string,
  value: Buffer,
): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await managedUser(tx, actor, orgId, userId);
    if (!(await findMetadata(tx, user.id, key)) && (await countMetadata(tx, user.id)) >= MAX_METADATA_KEYS) {
      throw fieldError('key', `the user already has ${MAX_METADATA_KEYS} keys, the most a user may have`);
    }
    await saveMetadata(write, { id: user.id, orgId }, key, value);
    return { details: writeDetails(write, orgId) };
  });
}

/** `DELETE /management/v1/users/{userId}/metadata/{key}`. */
export async function removeUserMetadata(db: Database, actor: Principal, orgId: string, userId: string, key: string): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await managedUser(tx, actor, orgId, userId);
    if (!(await deleteMetadata(write, { id: user.id, orgId }, key))) throw new NotFound('the user has no metadata of this key');
    return { details: writeDetails(write, orgId) };
  });
}

/**
 * A token hook's `set_user_metadata` (docs/actions.md): every key in one
 * write, by the service itself (no editor), within the same limit of keys
 * as the API; over it, nothing is written.
 */
export async function setMetadataFromHook(db: Database, user: { id: string; orgId: string }, entries: Array<{ key: string; value: Buffer }>): Promise<void> {
  await db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const fresh = new Set<string>();
    for (const { key } of entries) if (!(await findMetadata(tx, user.id, key))) fresh.add(key);
    if (fresh.size && (await countMetadata(tx, user.id)) + fresh.size > MAX_METADATA_KEYS) {
      throw fieldError('set_user_metadata', `the user would hold more than ${MAX_METADATA_KEYS} keys, the most a user may have`);
    }
    for (const { key, value } of entries) await saveMetadata(write, user, key, value);
  });
}
