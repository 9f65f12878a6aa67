import type { Queryable } from './database.ts';

// Which browser sessions a user holds: written when the engine saves a
// signed-in session, removed when it destroys one or it expires.

/** Writes the entry of a session, and drops that of the id it replaced (the engine gives a session a new id at each sign-in step). */
async function recordUserSession(db: Queryable, session: { accountId: string; sessionId: string; expiresAt: Date; replacedId?: string }): Promise<void> {
  await db.query(
    `WITH replaced AS (DELETE FROM user_sessions WHERE session_id = $4)
     INSERT INTO user_sessions (account_id, session_id, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, session_id) DO UPDATE SET expires_at = GREATEST(user_sessions.expires_at, EXCLUDED.expires_at)`,
    [session.accountId, session.sessionId, session.expiresAt, session.replacedId ?? null],
  );
}

/**
 * How long past a session's expiry its entry is kept. The engine saves a
 * session on every request that touches it, each time moving its idle expiry
 * a little; with this slack, the saves of the next minutes are covered by the
 * entry already written and need no write of their own.
 */
export const SESSION_INDEX_SLACK_SECONDS = 600;
const MAX_REMEMBERED = 10_000;

export interface SessionIndex {
  /** `replacedId`: the id the session had before the engine renewed it (its record is gone). */
  saved(session: { accountId: string; sessionId: string; expiresAt: Date; replacedId?: string }): void;
  destroyed(sessionId: string): void;
}

/**
 * The index as the engine's session events keep it: an entry is written
 * when a save's expiry is past what this node last wrote for that session
 * (every authorization in a signed-in browser saves its session). An entry
 * never ends before its session does; it may outlive it by the slack, which
 * only means ending a user's sessions also tries one already gone.
 */
export function sessionIndex(db: Queryable, onError: (err: unknown) => void): SessionIndex {
  const written = new Map<string, { accountId: string; until: number }>();
  return {
    saved({ accountId, sessionId, expiresAt, replacedId }) {
      const last = written.get(sessionId);
      if (last && last.accountId === accountId && last.until >= expiresAt.getTime()) return;
      const entry = { accountId, until: expiresAt.getTime() + SESSION_INDEX_SLACK_SECONDS * 1000 };
      if (written.size >= MAX_REMEMBERED) written.clear();
      written.set(sessionId, entry);
      if (replacedId) written.delete(replacedId);
      recordUserSession(db, { accountId, sessionId, expiresAt: new Date(entry.until), replacedId }).catch((err) => {
        if (written.get(sessionId) === entry) written.delete(sessionId);
        onError(err);
      });
    },
    destroyed(sessionId) {
      written.delete(sessionId);
      forgetSession(db, sessionId).catch(onError);
    },
  };
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
