import type { Queryable } from './database.ts';

// Which browser sessions a user holds: written when the engine saves a
// signed-in session, removed when it destroys one or it expires.

export async function recordUserSession(db: Queryable, session: { accountId: string; sessionId: string; expiresAt: Date }): Promise<void> {
  await db.query(
    `INSERT INTO user_sessions (account_id, session_id, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, session_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
    [session.accountId, session.sessionId, session.expiresAt],
  );
}

export async function forgetSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('DELETE FROM user_sessions WHERE session_id = $1', [sessionId]);
}

/** The ids of the user's sessions that have not expired; expired entries are dropped on the way. */
export async function sessionsOfUser(db: Queryable, accountId: string): Promise<string[]> {
  await db.query('DELETE FROM user_sessions WHERE account_id = $1 AND expires_at <= now()', [accountId]);
  const { rows } = await db.query<{ session_id: string }>('SELECT session_id FROM user_sessions WHERE account_id = $1', [accountId]);
  return rows.map((row) => row.session_id);
}

/** Drops the entries of expired sessions (the periodic sweep). */
export async function deleteExpiredUserSessions(db: Queryable): Promise<void> {
  await db.query('DELETE FROM user_sessions WHERE expires_at <= now()');
}
