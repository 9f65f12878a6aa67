import type Provider from 'oidc-provider';
import { errors, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import type { Queryable } from '../../storage/database.ts';
import { findUser } from '../../storage/users.ts';
import { membershipsOf } from '../../storage/memberships.ts';
import type { FeatureName } from '../../storage/features.ts';
import { KNOWN_SCOPES } from '../claims.ts';
import type { ExchangeOutcomes } from './token-extras.ts';
import { tokenOnNewGrant } from './issue.ts';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_EXCHANGE_PARAMETERS = ['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'requested_token_type', 'audience', 'scope', 'resource'];
/** RFC 8693 2.1: `audience` may be repeated. */
export const TOKEN_EXCHANGE_REPEATABLE = ['audience'];

const TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  refreshToken: 'urn:ietf:params:oauth:token-type:refresh_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  userId: 'urn:service:params:oauth:token-type:user_id',
} as const;

/** Who a presented token stands for, what it may be narrowed to, and whom it was for. */
interface Party {
  userId: string;
  scopes?: string[];
  audience: string[];
}

interface ExchangeContext {
  ctx: KoaContextWithOIDC;
  provider: Provider;
  db: Queryable;
  issuer: string;
  keys: JSONWebKeySet;
}

function invalidRequest(description: string): Error {
  return new errors.InvalidRequest(description);
}

function invalidGrant(description: string): Error {
  return new errors.CustomOIDCProviderError('invalid_grant', description);
}

function param(ctx: KoaContextWithOIDC, name: string): string | undefined {
  const value = (ctx.oidc.params as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An access token of ours, opaque or JWT, still active. */
async function fromAccessToken(x: ExchangeContext, value: string): Promise<Party> {
  const token = (await x.provider.AccessToken.find(value)) as unknown as { accountId?: string; clientId: string; scope?: string } | undefined;
  if (!token?.accountId) throw invalidGrant('token is not an active access token of a user');
  const client = (await x.provider.Client.find(token.clientId)) as unknown as { project_id?: string } | undefined;
  return { userId: token.accountId, scopes: token.scope?.split(' ') ?? [], audience: [token.clientId, ...(client?.project_id ? [client.project_id] : [])] };
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
    ({ payload, protectedHeader: { typ } } = await jwtVerify(value, createLocalJWKSet(x.keys), { issuer: x.issuer, algorithms: ['RS256'] }));
  } catch (err) {
    throw invalidGrant(`id_token rejected: ${(err as Error).message}`);
  }
  if (typ?.toLowerCase() === 'at+jwt' || payload.client_id !== undefined) throw invalidGrant('the token is an access token, not an id_token');
  if (typeof payload.sub !== 'string') throw invalidGrant('id_token has no subject');
  const audience = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
  return { userId: payload.sub, audience };
}

/** SEED 4.2: a JWT the calling client signed with one of its registered keys, naming the subject in `sub`. */
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
  return { userId: payload.sub, audience: [] };
}

async function resolveSubject(x: ExchangeContext, value: string, type: string, hasActor: boolean): Promise<Party> {
  switch (type) {
    case TYPE.accessToken:
      return fromAccessToken(x, value);
    case TYPE.idToken:
      return fromIdToken(x, value);
    case TYPE.jwt:
      if (!hasActor) throw invalidRequest('a subject_token of type jwt needs an actor_token');
      return fromClientJwt(x, value);
    case TYPE.userId:
      if (!hasActor) throw invalidRequest('a subject_token of type user_id needs an actor_token');
      return { userId: value, audience: [] };
    case TYPE.refreshToken:
      throw invalidRequest('refresh tokens cannot be exchanged');
    default:
      throw invalidRequest('unsupported subject_token_type');
  }
}

async function resolveActor(x: ExchangeContext, value: string, type: string | undefined): Promise<Party> {
  if (!type) throw invalidRequest('missing required parameter actor_token_type');
  if (type === TYPE.accessToken) return fromAccessToken(x, value);
  if (type === TYPE.idToken) return fromIdToken(x, value);
  throw invalidRequest('unsupported actor_token_type');
}

/** SPEC 2.3: acting for another user needs an impersonator role. */
async function checkImpersonation(db: Queryable, actorId: string, subjectOrgId: string): Promise<void> {
  const memberships = await membershipsOf(db, actorId);
  const permitted = memberships.some((m) =>
    (m.scope === 'instance' && m.roles.includes('IAM_END_USER_IMPERSONATOR')) || (m.scope === 'org' && m.scope_id === subjectOrgId && m.roles.includes('ORG_END_USER_IMPERSONATOR')),
  );
  if (!permitted) throw invalidRequest('impersonation not permitted');
}

/** RFC 8693 2.1: the requested audience must be among those of the presented tokens. */
function checkAudience(requested: string[], subject: Party, actor: Party | undefined): void {
  const available = new Set([...subject.audience, ...(actor?.audience ?? [])]);
  const outside = requested.find((a) => !available.has(a));
  if (outside) throw new errors.InvalidTarget(`audience ${outside} is not among the audiences of the presented tokens`);
}

/** The scopes of the new token: narrowed from the subject token's, or known scopes for other subjects. */
function grantedScopes(ctx: KoaContextWithOIDC, subject: Party): string[] {
  const requested = param(ctx, 'scope')?.split(' ').filter(Boolean);
  if (!requested) return subject.scopes ?? ['openid'];
  const unknown = requested.find((s) => !KNOWN_SCOPES.has(s));
  if (unknown) throw new errors.InvalidScope(`unknown scope ${unknown}`, unknown);
  const beyond = subject.scopes && requested.find((s) => !subject.scopes!.includes(s));
  if (beyond) throw new errors.InvalidScope(`scope ${beyond} exceeds the subject token`, beyond);
  return [...new Set(requested)];
}

export interface TokenExchangeDeps {
  db: Queryable;
  featureEnabled: (name: FeatureName) => Promise<boolean>;
  issuer: string;
  /** Public signing keys of this service, to verify our ID tokens. */
  publicKeys: JSONWebKeySet;
  findAccount: FindAccount;
  exchanges: ExchangeOutcomes;
  idTokenLifetime: number;
}

/**
 * RFC 8693 token exchange (SEED 4.2, SPEC 2.3), while the `oidcTokenExchange`
 * feature is on: a subject (and optionally an actor) token in, a token of
 * the requested type out — narrower in scope or audience, or acting for
 * another user with the `act` claim naming the actor.
 */
export function tokenExchangeGrant(deps: TokenExchangeDeps) {
  return async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
    if (!(await deps.featureEnabled('oidcTokenExchange'))) throw new errors.UnsupportedGrantType();
    if (param(ctx, 'resource') !== undefined) throw new errors.InvalidTarget('the resource parameter is not supported');
    const provider = ctx.oidc.provider as Provider;
    const x: ExchangeContext = { ctx, provider, db: deps.db, issuer: deps.issuer, keys: deps.publicKeys };

    const subjectToken = param(ctx, 'subject_token');
    const subjectType = param(ctx, 'subject_token_type');
    if (!subjectToken) throw invalidRequest('missing required parameter subject_token');
    if (!subjectType) throw invalidRequest('missing required parameter subject_token_type');
    const actorToken = param(ctx, 'actor_token');
    if (!actorToken && param(ctx, 'actor_token_type')) throw invalidRequest('actor_token_type given without actor_token');
    const requestedType = param(ctx, 'requested_token_type') ?? TYPE.accessToken;
    if (requestedType !== TYPE.accessToken && requestedType !== TYPE.jwt && requestedType !== TYPE.idToken) {
      throw invalidRequest('unsupported requested_token_type');
    }

    const subject = await resolveSubject(x, subjectToken, subjectType, Boolean(actorToken));
    const actor = actorToken ? await resolveActor(x, actorToken, param(ctx, 'actor_token_type')) : undefined;
    const audienceParam = (ctx.oidc.params as Record<string, unknown>).audience;
    const requestedAudience = (Array.isArray(audienceParam) ? audienceParam : audienceParam ? [audienceParam] : []).map(String);
    checkAudience(requestedAudience, subject, actor);

    const user = await findUser(deps.db, subject.userId);
    if (!user || user.state !== 'active') throw invalidGrant('the subject is not an active user');
    if (actor && actor.userId !== subject.userId) await checkImpersonation(deps.db, actor.userId, user.org_id);
    const scopes = grantedScopes(ctx, subject);
    const scope = scopes.join(' ');
    const act = actor && actor.userId !== subject.userId ? { sub: actor.userId } : undefined;

    const client = ctx.oidc.client!;
    const idToken = async (accessToken?: string) => {
      const account = await deps.findAccount(ctx, subject.userId);
      if (!account) throw invalidGrant('the subject is not an active user');
      const token = new provider.IdToken({ ...(await account.claims('id_token', scope, {}, [])), sub: subject.userId }, { ctx, client });
      (token as unknown as { scope: string }).scope = scope;
      if (act) token.set('act', act);
      if (accessToken) token.set('at_hash', accessToken);
      return token.issue({ use: 'idtoken' });
    };

    // An ID token is all the answer: it carries `act` itself, and no grant
    // is stored that no token names.
    if (requestedType === TYPE.idToken) {
      ctx.body = { access_token: await idToken(), issued_token_type: TYPE.idToken, token_type: 'N_A', expires_in: deps.idTokenLifetime, scope };
      return;
    }

    const refreshes = scopes.includes('offline_access') && client.grantTypeAllowed('refresh_token');
    const { token, grant } = await tokenOnNewGrant(provider, { accountId: subject.userId, client, gty: TOKEN_EXCHANGE_GRANT, scope, refreshable: refreshes });
    if (act || requestedAudience.length) await deps.exchanges.remember(grant.id, { ...(act ? { act } : {}), ...(requestedAudience.length ? { aud: [...new Set(requestedAudience)] } : {}) }, grant.lifetime);

    // SEED 4.2: access_token is returned opaque, jwt as a JWT, whatever the app's default.
    (token as unknown as { format_override: string }).format_override = requestedType === TYPE.jwt ? 'jwt' : 'opaque';
    ctx.oidc.entity('AccessToken', token);
    const accessToken = await token.save();
    const body: Record<string, unknown> = { access_token: accessToken, issued_token_type: requestedType, token_type: 'Bearer', expires_in: token.expiration, scope };
    if (refreshes) {
      const refresh = new provider.RefreshToken({ accountId: subject.userId, client, grantId: grant.id, gty: TOKEN_EXCHANGE_GRANT, scope, rotations: 0 });
      body.refresh_token = await refresh.save();
    }
    if (scopes.includes('openid')) body.id_token = await idToken(accessToken);
    ctx.body = body;
  };
}
