import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';

// Users' identities at external providers (migration 0046): one
// (provider, provided user id) names one user.

export interface IdpLink {
  userId: string;
  idpId: string;
  idpName: string;
  /** IDP_TYPE_… of the provider. */
  idpType: string;
  providedUserId: string;
  providedUserName: string;
}

interface Row {
  user_id: string;
  idp_id: string;
  idp_name: string;
  idp_type: string;
  provided_user_id: string;
  provided_user_name: string;
}

const SELECT = `SELECT l.user_id, l.idp_id, i.name AS idp_name, i.kind AS idp_type, l.provided_user_id, l.provided_user_name
  FROM user_idp_links l JOIN identity_providers i ON i.id = l.idp_id`;

const fromRow = (row: Row): IdpLink => ({
  userId: row.user_id,
  idpId: row.idp_id,
  idpName: row.idp_name,
  idpType: row.idp_type,
  providedUserId: row.provided_user_id,
  providedUserName: row.provided_user_name,
});

/** The user linked to `providedUserId` at the provider, if any. */
export async function findLinkedUserId(db: Queryable, idpId: string, providedUserId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ user_id: string }>('SELECT user_id FROM user_idp_links WHERE idp_id = $1 AND provided_user_id = $2', [
    idpId,
    providedUserId,
  ]);
  return rows[0]?.user_id;
}

export async function listUserLinks(db: Queryable, userId: string): Promise<IdpLink[]> {
  const { rows } = await db.query<Row>(`${SELECT} WHERE l.user_id = $1 ORDER BY l.creation_date, l.idp_id, l.provided_user_id`, [userId]);
  return rows.map(fromRow);
}

/** Links the user; false (and nothing written) when that identity is already someone's. */
export async function insertLink(write: Write, link: Omit<IdpLink, 'idpName' | 'idpType'>, orgId: string): Promise<boolean> {
  const inserted = await write.tx.query(
    `INSERT INTO user_idp_links (idp_id, provided_user_id, user_id, provided_user_name, creation_date) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (idp_id, provided_user_id) DO NOTHING`,
    [link.idpId, link.providedUserId, link.userId, link.providedUserName, write.at],
  );
  if (!inserted.rowCount) return false;
  await write.append({
    aggregateType: 'user',
    aggregateId: link.userId,
    type: 'user.idp.link.added',
    resourceOwner: orgId,
    payload: { idpId: link.idpId, providedUserId: link.providedUserId, providedUserName: link.providedUserName },
  });
  return true;
}

/** Removes the link; false when the user had none such. */
export async function deleteLink(write: Write, link: { userId: string; idpId: string; providedUserId: string }, orgId: string): Promise<boolean> {
  const removed = await write.tx.query('DELETE FROM user_idp_links WHERE user_id = $1 AND idp_id = $2 AND provided_user_id = $3', [
    link.userId,
    link.idpId,
    link.providedUserId,
  ]);
  if (!removed.rowCount) return false;
  await write.append({
    aggregateType: 'user',
    aggregateId: link.userId,
    type: 'user.idp.link.removed',
    resourceOwner: orgId,
    payload: { idpId: link.idpId, providedUserId: link.providedUserId },
  });
  return true;
}

/** `user.human.externallogin.check.succeeded`: the user signed in through the provider. */
export async function recordExternalLogin(write: Write, user: { id: string; orgId: string }, idpId: string): Promise<void> {
  await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.externallogin.check.succeeded',
    resourceOwner: user.orgId,
    payload: { idpId },
  });
}

/** The email address the provider gives, with its verified flag (isAutoUpdate). */
export async function updateEmailFromUpstream(write: Write, user: { id: string; orgId: string }, email: string, verified: boolean): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.email.changed',
    resourceOwner: user.orgId,
    payload: { email, isEmailVerified: verified },
  });
  await write.tx.query('UPDATE users SET email = $2, email_verified = $3, sequence = $4, change_date = $5 WHERE id = $1', [
    user.id,
    email,
    verified,
    sequence,
    write.at,
  ]);
}
