import type Provider from 'oidc-provider';
import type { Queryable } from '../storage/database.ts';
import { sessionsOfUser } from '../storage/user-sessions.ts';
import { TOKEN_EXCHANGE_GRANT } from '../domain/grant-types.ts';

/** What a token record tells of where it came from. */
export interface SessionBoundToken {
  accountId?: string;
  gty?: string;
  /** The browser session the token descends from (the engine's own token field). */
  sessionUid?: string;
}

/** A browser session as an exchange binds to it: its uid, and the session id (`sid`) each app signed in with. */
export interface OriginSession {
  uid: string;
  sidOf(clientId: string): string | undefined;
}

interface StoredSession {
  uid: string;
  accountId?: string;
  authorizations?: Record<string, { sid?: string }>;
}

function originOf(session: StoredSession): OriginSession {
  return { uid: session.uid, sidOf: (clientId) => session.authorizations?.[clientId]?.sid };
}

/**
 * The browser session a token exchange binds its tokens to, for a subject
 * access token: the token's own session, while it is still signed in as the
 * token's user. A subject token from no session (a machine user's, or one
 * refreshed after its session ended: offline_access) binds nothing, as it
 * ends with no session itself.
 */
export async function liveSessionOf(provider: Provider, token: SessionBoundToken): Promise<OriginSession | undefined> {
  if (!token.sessionUid || !token.accountId) return undefined;
  const session = (await provider.Session.findByUid(token.sessionUid)) as unknown as StoredSession | undefined;
  return session?.accountId === token.accountId ? originOf(session) : undefined;
}

/**
 * For a subject ID token that names its session (`sid`, the session id its
 * app signed in with): that session, found among the user's live sessions;
 * undefined once it has ended.
 */
export async function sessionOfSid(provider: Provider, db: Queryable, idToken: { sub: string; aud: string; sid: string }): Promise<OriginSession | undefined> {
  for (const id of await sessionsOfUser(db, idToken.sub)) {
    const session = (await provider.Session.find(id)) as unknown as StoredSession | undefined;
    if (session?.accountId === idToken.sub && session.authorizations?.[idToken.aud]?.sid === idToken.sid) return originOf(session);
  }
  return undefined;
}

/**
 * Tokens issued by an exchange (and refreshed from one) end with the session
 * of the token they came from: at its logout and at the end of all of a
 * user's sessions they are found no more. The engine's own session binding
 * cannot serve: it also asks the session for the token's grant, and an
 * exchanged token hangs on a grant of its own, of another app.
 */
export async function originSessionLives(provider: Provider, token: SessionBoundToken): Promise<boolean> {
  if (!token.sessionUid || !token.gty?.includes(TOKEN_EXCHANGE_GRANT)) return true;
  return (await liveSessionOf(provider, token)) !== undefined;
}
