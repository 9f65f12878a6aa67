import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import { ACTIVE } from '../domain/may-act.ts';

/** domain/may-act.ts's `orgMayAct` in SQL, over the orgs table as `o`. */
export const ORG_MAY_ACT = `o.state = '${ACTIVE}'`;

/** domain/may-act.ts's `userMayAct` in SQL, over users as `u` joined to their org as `o`. */
export const USER_MAY_ACT = `u.state = '${ACTIVE}' AND ${ORG_MAY_ACT}`;

export interface NewHuman {
  id: string;
  orgId: string;
  userName: string;
  firstName: string;
  lastName: string;
  nickName: string | null;
  displayName: string;
  preferredLanguage: string | null;
  gender: string;
  email: string;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
  passwordHash: string | null;
}

export interface NewMachine {
  id: string;
  orgId: string;
  userName: string;
  name: string;
  description: string | null;
  accessTokenType: string;
}

export interface UserRow {
  id: string;
  org_id: string;
  type: 'human' | 'machine';
  user_name: string;
  state: string;
  /** The state of the user's org: its users act only while it is active (domain/may-act.ts). */
  org_state: string;
  first_name: string | null;
  last_name: string | null;
  nick_name: string | null;
  display_name: string | null;
  preferred_language: string | null;
  gender: string | null;
  email: string | null;
  email_verified: boolean | null;
  phone: string | null;
  phone_verified: boolean | null;
  name: string | null;
  description: string | null;
  access_token_type: string | null;
  /** A human has a password (an invited one has none until it sets one); never the hash itself. */
  password_set: boolean;
  primary_domain: string;
  org_name: string;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

export async function addHuman(write: Write, user: NewHuman): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.human.added',
    resourceOwner: user.orgId,
    payload: {
      userName: user.userName,
      firstName: user.firstName,
      lastName: user.lastName,
      nickName: user.nickName,
      displayName: user.displayName,
      preferredLanguage: user.preferredLanguage,
      gender: user.gender,
      email: user.email,
      emailVerified: user.emailVerified,
      phone: user.phone,
      phoneVerified: user.phoneVerified,
      passwordSet: user.passwordHash !== null,
    },
  });
  await write.tx.query(
    `INSERT INTO users (id, org_id, type, user_name, first_name, last_name, nick_name, display_name, preferred_language, gender,
                        email, email_verified, phone, phone_verified, password_hash, password_changed_at, sequence, creation_date, change_date)
     VALUES ($1, $2, 'human', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14::text IS NULL THEN NULL ELSE $15::timestamptz END, $16, $15, $15)`,
    [
      user.id,
      user.orgId,
      user.userName,
      user.firstName,
      user.lastName,
      user.nickName,
      user.displayName,
      user.preferredLanguage,
      user.gender,
      user.email,
      user.emailVerified,
      user.phone,
      user.phoneVerified,
      user.passwordHash,
      write.at,
      sequence,
    ],
  );
}

export async function addMachine(write: Write, user: NewMachine): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'user',
    aggregateId: user.id,
    type: 'user.machine.added',
    resourceOwner: user.orgId,
    payload: { userName: user.userName, name: user.name, description: user.description, accessTokenType: user.accessTokenType },
  });
  await write.tx.query(
    `INSERT INTO users (id, org_id, type, user_name, name, description, access_token_type, sequence, creation_date, change_date)
     VALUES ($1, $2, 'machine', $3, $4, $5, $6, $7, $8, $8)`,
    [user.id, user.orgId, user.userName, user.name, user.description, user.accessTokenType, sequence, write.at],
  );
}

export async function userNameTaken(db: Queryable, orgId: string, userName: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM users WHERE org_id = $1 AND lower(user_name) = lower($2)', [orgId, userName]);
  return rows.length > 0;
}

export const USER_COLUMNS = `u.id, u.org_id, u.type, u.user_name, u.state, o.state AS org_state, u.first_name, u.last_name, u.nick_name, u.display_name,
  u.preferred_language, u.gender, u.email, u.email_verified, u.phone, u.phone_verified, u.name, u.description,
  u.access_token_type, u.password_hash IS NOT NULL AS password_set, d.domain AS primary_domain, o.name AS org_name, u.sequence::text AS sequence, u.creation_date, u.change_date`;

export async function findUser(db: Queryable, id: string): Promise<UserRow | undefined> {
  // An id PostgreSQL cannot hold in text (NUL) is no user's.
  if (id.includes('\u0000')) return undefined;
  const { rows } = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users u JOIN orgs o ON o.id = u.org_id JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.id = $1`,
    [id],
  );
  return rows[0];
}

export interface LoginCandidate {
  id: string;
  org_id: string;
  password_hash: string | null;
  full_match: boolean;
  state: 'active' | 'locked';
}

/**
 * Active and locked humans of active orgs a typed login name may mean: the full
 * `userName@primaryDomain`, or a bare userName (the caller accepts it only
 * when exactly one matches).
 */
export async function findHumansByLoginName(db: Queryable, login: string): Promise<LoginCandidate[]> {
  const { rows } = await db.query<LoginCandidate>(
    `SELECT u.id, u.org_id, u.password_hash, u.state, lower(u.user_name || '@' || d.domain) = lower($1) AS full_match
       FROM users u JOIN orgs o ON o.id = u.org_id JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary
      WHERE u.type = 'human' AND u.state IN ('active', 'locked') AND ${ORG_MAY_ACT}
        AND (lower(u.user_name || '@' || d.domain) = lower($1) OR lower(u.user_name) = lower($1))`,
    [login],
  );
  return rows;
}

/** Stamps a user row with the sequence and date of a user event that changes it. */
export async function touchUser(write: Write, userId: string, sequence: string): Promise<void> {
  await write.tx.query('UPDATE users SET sequence = $2, change_date = $3 WHERE id = $1', [userId, sequence, write.at]);
}

/**
 * Removes a user for good. The foreign keys cascade to its PATs, machine keys,
 * memberships and user grants, so every credential it held stops working with
 * the commit.
 */
export async function removeUser(write: Write, user: { id: string; orgId: string; userName: string }): Promise<void> {
  await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.removed', resourceOwner: user.orgId, payload: { userName: user.userName } });
  await write.tx.query('DELETE FROM users WHERE id = $1', [user.id]);
}

/** Whether a human already uses this address as email, or types it as login name. */
export async function emailOrLoginTaken(db: Queryable, email: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary
      WHERE u.type = 'human' AND (lower(u.email) = lower($1) OR lower(u.user_name || '@' || d.domain) = lower($1))
      LIMIT 1`,
    [email],
  );
  return rows.length > 0;
}
