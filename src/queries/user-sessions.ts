import type Provider from 'oidc-provider';
import type { Queryable } from '../storage/database.ts';
import { sessionsOfUser } from '../storage/user-sessions.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from './get-user.ts';

/** The engine's Session record, as far as the API reads it. */
export interface StoredSession {
  /** The record's key: the value of the browser's session cookie, never shown. */
  jti: string;
  /** A stable id of the session that is no credential (the engine's own handle for it). */
  uid: string;
  accountId?: string;
  loginTs?: number;
  amr?: string[];
  exp?: number;
  authorizations?: Record<string, { grantId?: string; persistsLogout?: boolean }>;
  sidFor(clientId: string): string;
  destroy(): Promise<void>;
}

export interface UserSessionView {
  id: string;
  creationDate: string;
  lastActiveDate: string;
  userAgent: string;
  amr: string[];
}

/**
 * The signed-in browser sessions of a user, from the session index and the
 * engine's records (an entry whose record is gone or holds another account
 * is no session of the user).
 */
export async function sessionsOf(db: Queryable, provider: Provider, userId: string): Promise<StoredSession[]> {
  const sessions: StoredSession[] = [];
  for (const sessionId of await sessionsOfUser(db, userId)) {
    const session = (await provider.Session.find(sessionId)) as unknown as StoredSession | undefined;
    if (session?.accountId === userId) sessions.push(session);
  }
  return sessions;
}

const isoOf = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/**
 * The API view of a session. The engine moves a session's expiry to "now
 * plus the idle lifetime" on every request that touches it, so its last
 * activity is its expiry less that lifetime. The id is the session's `uid`,
 * never the cookie value (`jti`) that would let a caller take the session
 * over. The browser's user agent is not recorded (docs/decisions.md).
 */
function sessionView(session: StoredSession, idleLifetimeSeconds: number): UserSessionView {
  const signedIn = session.loginTs ?? 0;
  return {
    id: session.uid,
    creationDate: isoOf(signedIn),
    lastActiveDate: isoOf(Math.max(signedIn, (session.exp ?? signedIn) - idleLifetimeSeconds)),
    userAgent: '',
    amr: session.amr ?? [],
  };
}

/** `GET /management/v1/users/{userId}/sessions`: seeing where a user is signed in is part of its security state (the every-role rule). */
export async function listUserSessions(
  db: Queryable,
  engine: EngineHolder,
  idleLifetimeSeconds: number,
  actor: Principal,
  orgId: string,
  userId: string,
): Promise<{ result: UserSessionView[] }> {
  const user = await userToActOn(db, actor, orgId, userId);
  const sessions = await sessionsOf(db, engine.provider, user.id);
  const views = sessions.map((session) => sessionView(session, idleLifetimeSeconds));
  return { result: views.sort((a, b) => a.creationDate.localeCompare(b.creationDate) || a.id.localeCompare(b.id)) };
}
