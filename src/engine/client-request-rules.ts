import { randomBytes } from 'node:crypto';
import querystring from 'node:querystring';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { decodeJwt } from 'jose';
import { JWT_BEARER_GRANT } from '../domain/grant-types.ts';
import { jwtProfileClientId } from '../domain/machine-clients.ts';
import { requestedScopes } from './scopes.ts';
import type { JwtAccessTokens } from './jwt-access-tokens.ts';
import type { EngineRule } from './rule-dispatch.ts';
import { invalidClient, invalidGrant, renderOAuthError } from './oauth-errors.ts';
import { formBody, isFormPost } from './request-form.ts';
import { lacksOpenidScope, promptAskingConsent } from './authorization-rules.ts';

// Rules for the requests clients send to the token, introspection,
// revocation, pushed authorization request and device authorization endpoints: we read the form body first (bounded), apply the
// rules below, and hand the engine the result.

type Params = querystring.ParsedUrlQuery;
type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** The client authentication methods an endpoint (or grant) accepts, where not all are (docs/oidc.md). */
const INTROSPECTION_METHODS: ReadonlySet<AuthMethod> = new Set(['client_secret_basic', 'private_key_jwt']);
const CLIENT_CREDENTIALS_METHODS: ReadonlySet<AuthMethod> = new Set(['client_secret_basic', 'client_secret_post']);

function presentedMethod(ctx: KoaContextWithOIDC, params: Params): AuthMethod {
  if (ctx.headers.authorization) return 'client_secret_basic';
  if (params.client_assertion !== undefined) return 'private_key_jwt';
  if (params.client_secret !== undefined) return 'client_secret_post';
  return 'none';
}

function requireAuthentication(params: Params, method: AuthMethod): void {
  if (method === 'none' && params.client_id === undefined) throw invalidClient('no client authentication provided');
}

function requireMethod(accepted: ReadonlySet<AuthMethod>, method: AuthMethod): void {
  if (!accepted.has(method)) throw invalidClient(`client authentication method ${method} is not accepted here`);
}

/**
 * RFC 7523 has the assertion authenticate the machine user: no client
 * authentication. The engine still wants a client, so the machine user's
 * own engine client is named from the assertion's `iss`.
 */
function nameJwtProfileClient(params: Params, method: AuthMethod): void {
  if (method !== 'none' || params.client_id !== undefined) {
    throw new errors.InvalidRequest('the JWT profile grant takes no client authentication: the assertion authenticates the user');
  }
  if (typeof params.assertion !== 'string') throw new errors.InvalidRequest('missing required parameter assertion');
  let iss: unknown;
  try {
    iss = decodeJwt(params.assertion).iss;
  } catch {
    throw invalidGrant('assertion is not a valid JWT');
  }
  if (typeof iss !== 'string' || !/^[\w-]{1,64}$/.test(iss)) throw invalidGrant('assertion iss must be the user id of a machine user');
  params.client_id = jwtProfileClientId(iss);
}

/** The JWT profile's engine client exists only for a current machine user: otherwise the grant is invalid. */
async function checkJwtProfileUser(ctx: KoaContextWithOIDC, params: Params): Promise<void> {
  const client = await (ctx.app as unknown as Provider).Client.find(String(params.client_id));
  if (!client) throw invalidGrant('assertion iss is not an active machine user');
}

/**
 * Our own JWT access tokens are stored records: at introspection and
 * revocation they are looked up by their `jti`. A JWT that is not ours, or
 * not valid, becomes a value that matches nothing (inactive; revoking it is
 * a no-op), as RFC 7662 and RFC 7009 want.
 */
async function resolveJwtToken(params: Params, jwt: JwtAccessTokens): Promise<void> {
  const token = params.token;
  if (typeof token !== 'string' || token.split('.').length !== 3) return;
  params.token = (await jwt.tokenIdOf(token)) ?? `unknown-${randomBytes(8).toString('hex')}`;
}

/**
 * A token_type_hint only orders the engine's look-ups: with `access_token`
 * it tries access tokens and client credentials (Redis) first and refresh
 * tokens (PostgreSQL) only when both miss, instead of all three at once.
 * Same answers, one database round trip fewer for the common case.
 */
function defaultTokenHint(params: Params): void {
  if (params.token_type_hint === undefined) params.token_type_hint = 'access_token';
}

/**
 * One endpoint's rules over its form: `apply` checks the parameters and may
 * change them; the engine then reads the form as sent, or as changed when
 * `apply` says so. Other content types are the engine's to refuse.
 */
function formRule(apply: (ctx: KoaContextWithOIDC, params: Params, method: AuthMethod) => Promise<boolean> | boolean): EngineRule {
  return async (ctx, next) => {
    if (!isFormPost(ctx)) return next();
    let method: AuthMethod = 'none';
    try {
      // Read, and refused with a NUL, by refuseNulParameters (request-form.ts).
      const raw = await formBody(ctx);
      const params = querystring.parse(raw);
      // For the throttle of failed authentication (throttle-rule.ts).
      ctx.state.grantType = params.grant_type;
      method = presentedMethod(ctx, params);
      const rewritten = await apply(ctx, params, method);
      (ctx.req as { body?: string }).body = rewritten ? querystring.stringify(params) : raw;
    } catch (err) {
      if (!(err instanceof errors.OIDCProviderError)) throw err;
      renderOAuthError(ctx, err, method === 'client_secret_basic');
      return;
    }
    await next();
  };
}

/** The token endpoint: the JWT profile names its client; client_credentials takes secrets only and known scopes. */
const tokenForm = formRule(async (ctx, params, method) => {
  if (params.grant_type === JWT_BEARER_GRANT) {
    nameJwtProfileClient(params, method);
    await checkJwtProfileUser(ctx, params);
    return true;
  }
  requireAuthentication(params, method);
  if (params.grant_type === 'client_credentials') {
    requireMethod(CLIENT_CREDENTIALS_METHODS, method);
    // The engine would silently drop unknown scopes.
    requestedScopes(params.scope);
  }
  return false;
});

/** Introspection (secret or key clients only) and revocation look our JWT access tokens up by their record id. */
function tokenLookupForm(jwt: JwtAccessTokens, accepted?: ReadonlySet<AuthMethod>): EngineRule {
  return formRule(async (_ctx, params, method) => {
    requireAuthentication(params, method);
    if (accepted) requireMethod(accepted, method);
    defaultTokenHint(params);
    await resolveJwtToken(params, jwt);
    return true;
  });
}

/**
 * Pushed authorization requests (RFC 9126 2): the client authenticates as
 * at the token endpoint for the code it will redeem, so the same matrix
 * (all four methods, none with its client_id). The rules of the
 * authorization endpoint apply to what is pushed: `openid` is required
 * (`invalid_scope`, as JSON here: RFC 9126 2.3), and `offline_access` asks
 * for consent on the caller's behalf as `offlineAccessAsksConsent` does.
 * A pushed request must not itself carry a request_uri (RFC 9126 2.1): the
 * engine calls that request_uri_not_supported, RFC 9126 2.3 an
 * invalid_request.
 */
const pushedAuthorizationForm = formRule((_ctx, params, method) => {
  requireAuthentication(params, method);
  if (params.request_uri !== undefined) throw new errors.InvalidRequest('request_uri must not be used at the pushed authorization request endpoint');
  if (lacksOpenidScope(params)) throw new errors.InvalidScope('openid scope must be requested', 'openid');
  const prompt = promptAskingConsent(params);
  if (!prompt) return false;
  params.prompt = prompt;
  return true;
});

/** Device authorization (RFC 8628 3.1): the client authenticates as it will at the token endpoint. */
const deviceAuthorizationForm = formRule((_ctx, params, method) => {
  requireAuthentication(params, method);
  return false;
});

export interface ClientRequestRules {
  token: EngineRule;
  introspection: EngineRule;
  revocation: EngineRule;
  pushedAuthorization: EngineRule;
  deviceAuthorization: EngineRule;
}

export function clientRequestRules(jwt: JwtAccessTokens): ClientRequestRules {
  return {
    token: tokenForm,
    introspection: tokenLookupForm(jwt, INTROSPECTION_METHODS),
    revocation: tokenLookupForm(jwt),
    pushedAuthorization: pushedAuthorizationForm,
    deviceAuthorization: deviceAuthorizationForm,
  };
}

/**
 * A grant type the client may not use is `unauthorized_client` (RFC 6749
 * 5.2); the engine says invalid_request.
 */
export const tokenErrorNames: EngineRule = async (ctx, next) => {
  await next();
  if (ctx.status !== 400) return;
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (body?.error === 'invalid_request' && body.error_description === 'requested grant type is not allowed for this client') {
    ctx.body = { ...body, error: 'unauthorized_client' };
  }
};

/**
 * A replayed DPoP proof is `invalid_dpop_proof` (RFC 9449 5, 11.1); the
 * engine throws invalid_grant and shows only a generic description, so the
 * error is renamed where it is reported (the `grant.error` event, after the
 * engine rendered it).
 */
export function renameDpopReplay(ctx: KoaContextWithOIDC, err: { error_detail?: string }): void {
  const body = ctx.body as { error?: string } | undefined;
  if (body?.error === 'invalid_grant' && err.error_detail === 'DPoP proof JWT Replay detected') {
    ctx.body = { error: 'invalid_dpop_proof', error_description: 'DPoP proof JWT replay detected' };
  }
}
