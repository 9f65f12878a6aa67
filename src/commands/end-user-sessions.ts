import type Provider from 'oidc-provider';
import type { Database } from '../storage/database.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { forgetSession, sessionsOfUser } from '../storage/user-sessions.ts';
import type { Principal } from '../domain/roles.ts';
import { NotFound } from '../domain/errors.ts';
import { userToActOn } from '../queries/get-user.ts';
import { sessionsOf, type StoredSession } from '../queries/user-sessions.ts';
import { findUser } from '../storage/users.ts';

interface LogoutClient {
  backchannelLogoutUri?: string;
  backchannelLogout(sub: string, sid: string): Promise<void>;
}

/** The engine's token records of a grant, by model (as its own revocation does, lib/helpers/revoke.js). */
const GRANT_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode'] as const;

type RevokingAdapter = { revokeByGrantId(grantId: string): Promise<void> };
const adapterOf = (provider: Provider, model: string) => (provider as unknown as Record<string, { adapter: RevokingAdapter }>)[model]!.adapter;

/**
 * What logout does to one session (docs/oidc.md, "End session"): each app
 * of the session with a back-channel logout URI is told (in the
 * background), the access tokens issued in it are revoked, grants that end
 * with the session go with their codes and refresh tokens (offline_access
 * survives), and the session is destroyed.
 */
async function endSession(provider: Provider, session: StoredSession, accountId: string): Promise<void> {
  for (const [clientId, authorization] of Object.entries(session.authorizations ?? {})) {
    const client = (await provider.Client.find(clientId)) as unknown as LogoutClient | undefined;
    if (client?.backchannelLogoutUri) await client.backchannelLogout(accountId, session.sidFor(clientId));
    const { grantId } = authorization;
    if (!grantId) continue;
    if (authorization.persistsLogout) {
      await adapterOf(provider, 'AccessToken').revokeByGrantId(grantId);
    } else {
      await Promise.all(GRANT_MODELS.map((model) => adapterOf(provider, model).revokeByGrantId(grantId)));
      await (provider.Grant as unknown as { adapter: { destroy(id: string): Promise<void> } }).adapter.destroy(grantId);
    }
  }
  await session.destroy();
}

/**
 * `DELETE /management/v1/users/{userId}/sessions`: ends every browser
 * session of the user, on every device, as if each were logged out
 * (OIDC Back-Channel Logout 1.0 tokens included).
 */
export async function endUserSessions(db: Database, engine: EngineHolder, actor: Principal, orgId: string, userId: string): Promise<{ details: WriteDetails }> {
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.sessions.terminated', resourceOwner: orgId, payload: {} });
    return { details: writeDetails(write, orgId) };
  });
  await endSessionsOf(db, engine, userId);
  return result;
}

/**
 * Ends every browser session of the user as logout would, but `keep` (the
 * record key of the session the user acts from, as its cookie holds it).
 */
export async function endSessionsOf(db: Database, engine: EngineHolder, userId: string, keep?: string): Promise<void> {
  const provider = engine.provider;
  for (const sessionId of await sessionsOfUser(db, userId)) {
    if (sessionId === keep) continue;
    const session = (await provider.Session.find(sessionId)) as unknown as StoredSession | undefined;
    if (session?.accountId === userId) await endSession(provider, session, userId);
    await forgetSession(db, sessionId);
  }
}

/**
 * `DELETE /management/v1/users/{userId}/sessions/{sessionId}`: ends one
 * browser session of the user (by the id the session list shows) as logout
 * would; a session of another user, or none, is 404 and writes nothing.
 */
export async function endUserSession(
  db: Database,
  engine: EngineHolder,
  actor: Principal,
  orgId: string,
  userId: string,
  sessionId: string,
): Promise<{ details: WriteDetails }> {
  const provider = engine.provider;
  // The engine's records are read outside the write: on the embedded
  // database they share its one connection.
  const user = await userToActOn(db, actor, orgId, userId);
  const session = (await sessionsOf(db, provider, user.id)).find((candidate) => candidate.uid === sessionId);
  if (!session) throw new NotFound('session not found');
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await userToActOn(tx, actor, orgId, userId);
    await write.append({ aggregateType: 'user', aggregateId: user.id, type: 'user.session.terminated', resourceOwner: orgId, payload: { sessionId } });
    return { details: writeDetails(write, orgId) };
  });
  await endSession(provider, session, userId);
  await forgetSession(db, session.jti);
  return result;
}

/**
 * A service provider's single logout (docs/saml.md): the browser session of
 * `sessionUid` ends as logout would, if it is the session of the user the
 * SP names (`nameId`: the user id, or the user's email address). Answers
 * the ended session (its apps are the other participants to log out), or
 * undefined when none ended.
 */
export async function endSessionNamedBySp(db: Database, provider: Provider, sessionUid: string, nameId: string): Promise<StoredSession | undefined> {
  const session = (await provider.Session.findByUid(sessionUid)) as unknown as StoredSession | undefined;
  if (!session?.accountId) return undefined;
  const user = await findUser(db, session.accountId);
  if (!user || (user.id !== nameId && user.email?.toLowerCase() !== nameId.toLowerCase())) return undefined;
  await endSession(provider, session, session.accountId);
  await forgetSession(db, session.jti);
  return session;
}
