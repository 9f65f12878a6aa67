import type { Queryable } from '../storage/database.ts';
import { findPatOwner } from '../storage/credentials.ts';
import { secretDigest } from '../security/secrets.ts';

/** The owner of a personal access token that exists, has not expired and belongs to an active user. */
export function patVerifier(db: Queryable, secretKey: Buffer) {
  return async (token: string): Promise<{ userId: string; orgId: string } | undefined> => {
    const owner = await findPatOwner(db, secretDigest(secretKey, token));
    return owner && { userId: owner.user_id, orgId: owner.org_id };
  };
}
