import type Provider from 'oidc-provider';
import { errors, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import type { FeatureName } from '../../storage/features.ts';
import type { UserLookup } from '../accounts.ts';
import { API_SCOPE, CLAIMS_BY_SCOPE } from '../claims.ts';
import { optionalScopes } from '../scopes.ts';
import { grantableScopes } from '../api-scope.ts';
import type { ExchangeOutcomes } from './exchange-outcomes.ts';
import { mintIdToken, tokenOnNewGrant } from './issue.ts';
import { bindRefreshToken, bindToDpopProof } from './dpop.ts';
import { invalidGrant } from '../oauth-errors.ts';
import { TOKEN_EXCHANGE_GRANT } from '../../domain/grant-types.ts';
import { audienceOf, type TokenLike } from '../token-policies.ts';
import { liveSessionOf, type SessionBoundToken } from '../exchanged-token-sessions.ts';
import { spaceSeparated } from '../../domain/space-separated.ts';
import { userMayAct } from '../../domain/may-act.ts';

export const TOKEN_EXCHANGE_PARAMETERS = [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'requested_token_type',
  'audience',
  'scope',
  'resource',
];
/** RFC 8693 2.1: `audience` may be repeated. */
export const TOKEN_EXCHANGE_REPEATABLE = ['audience'];

const TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  refreshToken: 'urn:ietf:params:oauth:token-type:refresh_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  userId: 'urn:service:params:oauth:token-type:user_id',
} as const;

/** Who a presented token stands for, the scopes it carries (none for a bare user id or client JWT), and whom it was for. */
interface Party {
  userId: string;
  scopes?: string[];
  audience: string[];
  /** Only an access token is a credential of its user: ID tokens are handed to every app a user signs in to. */
  kind: 'access_token' | 'id_token' | 'user';
  /** The browser session the token descends from, for an access token that has one. */
  sessionUid?: string;
}

interface ExchangeContext {
  ctx: KoaContextWithOIDC;
  provider: Provider;
  issuer: string;
  keys: JSONWebKeySet;
}

/** Scopes that only a token holding them passes on: never taken from a bare user id or an ID token. */
const HELD_ONLY = new Set([API_SCOPE, 'offline_access']);
/** What an ID token's claims show of the scopes of the grant that issued it. */
const IDENTITY_SCOPES = ['profile', 'email', 'phone', 'address'] as const;

function param(ctx: KoaContextWithOIDC, name: string): string | undefined {
  const value = (ctx.oidc.params as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An access token of ours, opaque or JWT, still active; its audience is its app, that app's project and an exchange's requested audience. */
async function fromAccessToken(x: ExchangeContext, value: string): Promise<Party> {
  const token = (await x.provider.AccessToken.find(value)) as unknown as (TokenLike & SessionBoundToken) | undefined;
  if (!token?.accountId) throw invalidGrant('token is not an active access token of a user');
  return {
    userId: token.accountId,
    scopes: spaceSeparated(token.scope),
    audience: (await audienceOf(x.provider, token)) ?? [],
    kind: 'access_token',
    ...(token.sessionUid ? { sessionUid: token.sessionUid } : {}),
  };
}

/** An ID token carries no scope: its claims show which identity scopes the grant behind it held. */
function scopesShownBy(payload: JWTPayload): string[] {
  return ['openid', ...IDENTITY_SCOPES.filter((scope) => CLAIMS_BY_SCOPE[scope]!.some((claim) => payload[claim] !== undefined))];
}

/**
 * An ID token signed by us. Our JWT access tokens are signed with the same
 * keys: one of those (typ at+jwt) is no ID token, or a revoked access token
 * could be exchanged under the other type.
 */
async function fromIdToken(x: ExchangeContext, value: string): Promise<Party> {
  let payload: JWTPayload;
  let typ: string | undefined;
  try {
    ({
      payload,
      protectedHeader: { typ },
    } = await jwtVerify(value, createLocalJWKSet(x.keys), { issuer: x.issuer, algorithms: ['RS256'] }));
  } catch (err) {
    throw invalidGrant(`id_token rejected: ${(err as Error).message}`);
  }
  if (typ?.toLowerCase() === 'at+jwt' || payload.client_id !== undefined) throw invalidGrant('the token is an access token, not an id_token');
  if (typeof payload.sub !== 'string') throw invalidGrant('id_token has no subject');
  const audience = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
  return { userId: payload.sub, scopes: scopesShownBy(payload), audience, kind: 'id_token' };
}

/** The `jwt` subject token type of docs/oidc.md: a JWT the calling client signed with one of its registered keys, naming the subject in `sub`. */
async function fromClientJwt(x: ExchangeContext, value: string): Promise<Party> {
  const client = x.ctx.oidc.client as unknown as { clientId: string; jwks?: { keys: JWK[] } };
  if (!client.jwks?.keys.length) throw invalidGrant('the client has no registered keys to sign a subject JWT');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(value, createLocalJWKSet(client.jwks as JSONWebKeySet), { issuer: client.clientId }));
  } catch (err) {
    throw invalidGrant(`subject jwt rejected: ${(err as Error).message}`);
  }
  if (typeof payload.sub !== 'string') throw invalidGrant('subject jwt has no subject');
  return { userId: payload.sub, audience: [], kind: 'user' };
}

async function resolveSubject(x: ExchangeContext, value: string, type: string, hasActor: boolean): Promise<Party> {
  switch (type) {
    case TYPE.accessToken:
      return fromAccessToken(x, value);
    case TYPE.idToken:
      return fromIdToken(x, value);
    case TYPE.jwt:
      if (!hasActor) throw new errors.InvalidRequest('a subject_token of type jwt needs an actor_token');
      return fromClientJwt(x, value);
    case TYPE.userId:
      if (!hasActor) throw new errors.InvalidRequest('a subject_token of type user_id needs an actor_token');
      return { userId: value, audience: [], kind: 'user' };
    case TYPE.refreshToken:
      throw new errors.InvalidRequest('refresh tokens cannot be exchanged');
    default:
      throw new errors.InvalidRequest('unsupported subject_token_type');
  }
}

/**
 * The actor proves who acts: only an access token does. An ID token proves
 * nothing of the kind (every app the user signs in to holds one), not even
 * for its own user.
 */
async function resolveActor(x: ExchangeContext, value: string, type: string | undefined): Promise<Party> {
  if (!type) throw new errors.InvalidRequest('missing required parameter actor_token_type');
  if (type === TYPE.accessToken) return fromAccessToken(x, value);
  if (type === TYPE.idToken) throw new errors.InvalidRequest('an ID token is no actor_token: the actor presents an access token');
  throw new errors.InvalidRequest('unsupported actor_token_type');
}

/**
 * A subject token is one the calling app was meant to use. An access token:
 * issued to the app or its project, or exchanged for it as audience. An ID
 * token: issued to the app itself (its `aud`, OIDC Core 2), so an app that
 * was shown another app's ID token cannot turn it into a token of its own.
 */
function checkSubjectFor(client: { clientId: string; project_id?: unknown }, subject: Party): void {
  const audience = new Set(subject.audience);
  if (subject.kind === 'id_token') {
    if (audience.has(client.clientId)) return;
    throw invalidGrant('the id_token was not issued to this client');
  }
  if (subject.kind !== 'access_token') return;
  if (audience.has(client.clientId) || (typeof client.project_id === 'string' && audience.has(client.project_id))) return;
  throw invalidGrant('the subject_token was not issued to this client or its project');
}

/** Whether the actor may act for the subject, a user of `orgId` (src/queries/principal.ts). */
export type ImpersonationCheck = (actorId: string, subject: { userId: string; orgId: string }) => Promise<boolean>;

/** RFC 8693 2.1: the requested audience must be among those of the presented tokens. */
function checkAudience(requested: string[], subject: Party, actor: Party | undefined): void {
  const available = new Set([...subject.audience, ...(actor?.audience ?? [])]);
  const outside = requested.find((a) => !available.has(a));
  if (outside) throw new errors.InvalidTarget(`audience ${outside} is not among the audiences of the presented tokens`);
}

/**
 * The most the new token may carry: never more than the subject token held.
 * A bare user id (or client JWT) holds nothing itself: the actor's access
 * token is the ceiling, and the API scope and offline_access, which only a
 * token holding them passes on, are out of reach.
 */
function scopeCeiling(subject: Party, actor: Party | undefined): string[] {
  if (subject.scopes) return subject.scopes.filter((scope) => subject.kind === 'access_token' || !HELD_ONLY.has(scope));
  const held = actor?.kind === 'access_token' ? (actor.scopes ?? []) : ['openid'];
  return held.filter((scope) => !HELD_ONLY.has(scope));
}

/** The scopes of the new token: those asked for (by default the subject token's), within the ceiling. */
function grantedScopes(ctx: KoaContextWithOIDC, subject: Party, ceiling: string[]): string[] {
  const requested = optionalScopes((ctx.oidc.params as Record<string, unknown>).scope);
  if (!requested) return subject.scopes ? ceiling : ['openid'];
  const beyond = requested.find((s) => !ceiling.includes(s));
  if (beyond) throw new errors.InvalidScope(`scope ${beyond} exceeds the ${subject.scopes ? 'subject token' : 'actor token'}`, beyond);
  return requested;
}

export interface TokenExchangeDeps {
  /** Users as hot paths read them (cached briefly, cleared on change): subject and actor must be active. */
  lookupUser: UserLookup;
  /** Acting for another user needs an impersonator role, and reaches end users only (docs/security.md). */
  mayImpersonate: ImpersonationCheck;
  featureEnabled: (name: FeatureName) => Promise<boolean>;
  issuer: string;
  /** Public signing keys of this service, to verify our ID tokens. */
  publicKeys: JSONWebKeySet;
  findAccount: FindAccount;
  exchanges: ExchangeOutcomes;
  idTokenLifetime: number;
}

/**
 * RFC 8693 token exchange (docs/oidc.md), while the `oidcTokenExchange`
 * feature is on: a subject (and optionally an actor) token in, a token of
 * the requested type out — narrower in scope or audience, or acting for
 * another user with the `act` claim naming the actor.
 */
export function tokenExchangeGrant(deps: TokenExchangeDeps) {
  return async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
    if (!(await deps.featureEnabled('oidcTokenExchange'))) throw new errors.UnsupportedGrantType();
    if (param(ctx, 'resource') !== undefined) throw new errors.InvalidTarget('the resource parameter is not supported');
    const provider = ctx.oidc.provider as Provider;
    const x: ExchangeContext = { ctx, provider, issuer: deps.issuer, keys: deps.publicKeys };
    const client = ctx.oidc.client!;

    const subjectToken = param(ctx, 'subject_token');
    const subjectType = param(ctx, 'subject_token_type');
    if (!subjectToken) throw new errors.InvalidRequest('missing required parameter subject_token');
    if (!subjectType) throw new errors.InvalidRequest('missing required parameter subject_token_type');
    const actorToken = param(ctx, 'actor_token');
    if (!actorToken && param(ctx, 'actor_token_type')) throw new errors.InvalidRequest('actor_token_type given without actor_token');
    const requestedType = param(ctx, 'requested_token_type') ?? TYPE.accessToken;
    if (requestedType !== TYPE.accessToken && requestedType !== TYPE.jwt && requestedType !== TYPE.idToken) {
      throw new errors.InvalidRequest('unsupported requested_token_type');
    }

    const subject = await resolveSubject(x, subjectToken, subjectType, Boolean(actorToken));
    checkSubjectFor(client as unknown as { clientId: string; project_id?: unknown }, subject);
    const actor = actorToken ? await resolveActor(x, actorToken, param(ctx, 'actor_token_type')) : undefined;
    const audienceParam = (ctx.oidc.params as Record<string, unknown>).audience;
    const requestedAudience = (Array.isArray(audienceParam) ? audienceParam : audienceParam ? [audienceParam] : []).map(String);
    checkAudience(requestedAudience, subject, actor);

    const user = await deps.lookupUser(subject.userId);
    if (!userMayAct(user)) throw invalidGrant('the subject is not an active user');
    if (actor && !userMayAct(await deps.lookupUser(actor.userId))) throw invalidGrant('the actor is not an active user');
    if (actor && actor.userId !== subject.userId && !(await deps.mayImpersonate(actor.userId, { userId: user.id, orgId: user.org_id }))) {
      throw new errors.InvalidRequest('impersonation not permitted');
    }
    // Asked-for scopes beyond the ceiling are an error; the API scope for an
    // app that may not hold it is left out silently, as at the authorization endpoint.
    const scopes = grantableScopes(client, grantedScopes(ctx, subject, scopeCeiling(subject, actor)));
    const scope = scopes.join(' ');
    const act = actor && actor.userId !== subject.userId ? { sub: actor.userId } : undefined;

    const idToken = (accessToken?: string) =>
      mintIdToken(ctx, { accountId: subject.userId, scope, findAccount: deps.findAccount, ...(accessToken ? { accessToken } : {}), ...(act ? { act } : {}) });

    // An ID token is all the answer: it carries `act` itself, and no grant
    // is stored that no token names.
    if (requestedType === TYPE.idToken) {
      ctx.body = { access_token: await idToken(), issued_token_type: TYPE.idToken, token_type: 'N_A', expires_in: deps.idTokenLifetime, scope };
      return;
    }

    const refreshes = scopes.includes('offline_access') && client.grantTypeAllowed('refresh_token');
    const { token, grant } = await tokenOnNewGrant(provider, { accountId: subject.userId, client, gty: TOKEN_EXCHANGE_GRANT, scope, refreshable: refreshes });
    // The new tokens end with the session the subject token came from (exchanged-token-sessions.ts).
    const sessionUid = await liveSessionOf(provider, { accountId: subject.userId, sessionUid: subject.sessionUid });
    if (sessionUid) (token as unknown as SessionBoundToken).sessionUid = sessionUid;
    if (act || requestedAudience.length)
      await deps.exchanges.remember(
        grant.id,
        { ...(act ? { act } : {}), ...(requestedAudience.length ? { aud: [...new Set(requestedAudience)] } : {}) },
        grant.lifetime,
      );

    // The token type table of docs/oidc.md: access_token is returned opaque, jwt as a JWT, whatever the app's default.
    (token as unknown as { format_override: string }).format_override = requestedType === TYPE.jwt ? 'jwt' : 'opaque';
    const tokenType = await bindToDpopProof(ctx, token);
    ctx.oidc.entity('AccessToken', token);
    const accessToken = await token.save();
    const body: Record<string, unknown> = {
      access_token: accessToken,
      issued_token_type: requestedType,
      token_type: tokenType,
      expires_in: token.expiration,
      scope,
    };
    if (refreshes) {
      const refresh = new provider.RefreshToken({
        accountId: subject.userId,
        client,
        grantId: grant.id,
        gty: TOKEN_EXCHANGE_GRANT,
        scope,
        rotations: 0,
        ...(sessionUid ? { sessionUid } : {}),
      });
      await bindRefreshToken(ctx, token, refresh);
      body.refresh_token = await refresh.save();
    }
    if (scopes.includes('openid')) body.id_token = await idToken(accessToken);
    ctx.body = body;
  };
}
