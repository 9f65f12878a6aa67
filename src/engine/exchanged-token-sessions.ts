import type Provider from 'oidc-provider';
import { TOKEN_EXCHANGE_GRANT } from '../domain/grant-types.ts';

/** What a token record tells of where it came from. */
export interface SessionBoundToken {
  accountId?: string;
  gty?: string;
  /** The browser session the token descends from (the engine's own token field). */
  sessionUid?: string;
}

/**
 * The browser session a token exchange binds its tokens to: the subject
 * token's own, while it is still signed in as the subject's user. A subject
 * token from no session (a machine user's, or one refreshed after its
 * session ended: offline_access) binds nothing, as it ends with no session
 * itself.
 */
export async function liveSessionOf(provider: Provider, token: SessionBoundToken): Promise<string | undefined> {
  if (!token.sessionUid || !token.accountId) return undefined;
  const session = await provider.Session.findByUid(token.sessionUid);
  return session?.accountId === token.accountId ? token.sessionUid : undefined;
}

/**
 * Tokens issued by an exchange (and refreshed from one) end with the session
 * of the token they came from: at logout and at the end of all of a user's
 * sessions they are found no more. The engine's own session binding cannot
 * serve: it also asks the session for the token's grant, and an exchanged
 * token hangs on a grant of its own, of another app.
 */
export async function originSessionLives(provider: Provider, token: SessionBoundToken): Promise<boolean> {
  if (!token.sessionUid || !token.gty?.includes(TOKEN_EXCHANGE_GRANT)) return true;
  return (await liveSessionOf(provider, token)) !== undefined;
}
