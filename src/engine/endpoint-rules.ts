import { randomBytes } from 'node:crypto';
import querystring from 'node:querystring';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { KNOWN_SCOPES } from './claims.ts';
import { decodeJwt } from 'jose';
import { ROUTES } from './routes.ts';
import { JWT_BEARER_GRANT, jwtProfileClientId } from '../domain/machine-clients.ts';
import type { JwtAccessTokens } from './jwt-access-tokens.ts';
import type { EngineRule } from './rules-by-endpoint.ts';

type Params = querystring.ParsedUrlQuery;
type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

// The engine reads these bodies itself; we read them first (bounded) to
// apply our rules and hand the engine the result.
const MAX_FORM_BYTES = 64 * 1024;

/** SEED 5.1: the client authentication methods each endpoint (or grant) accepts. */
const ACCEPTED: Record<string, ReadonlySet<AuthMethod>> = {
  introspection: new Set(['client_secret_basic', 'private_key_jwt']),
  client_credentials: new Set(['client_secret_basic', 'client_secret_post']),
};

class OAuthError extends Error {
  readonly status: number;
  readonly error: string;
  readonly basicTried: boolean;
  constructor(status: number, error: string, description: string, basicTried = false) {
    super(description);
    this.status = status;
    this.error = error;
    this.basicTried = basicTried;
  }
}

function presentedMethod(ctx: KoaContextWithOIDC, params: Params): AuthMethod {
  if (ctx.headers.authorization) return 'client_secret_basic';
  if (params.client_assertion !== undefined) return 'private_key_jwt';
  if (params.client_secret !== undefined) return 'client_secret_post';
  return 'none';
}

/**
 * Reads the form body, bounded. Events rather than an async iterator: this
 * runs on every token and introspection request. Past the bound it stops
 * reading and the connection closes after the answer, so the rest is never read.
 */
function readForm(ctx: KoaContextWithOIDC): Promise<string> {
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      ctx.set('Connection', 'close');
      reject(new OAuthError(400, 'invalid_request', 'request body is too large'));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    // A client that hangs up mid-body: nobody is left to answer.
    const onClose = () => onError(new Error('request closed before its body ended'));
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Machine users sign JWT profile assertions as themselves: their engine client is named from `iss`. */
function nameJwtProfileClient(params: Params): void {
  if (typeof params.assertion !== 'string') throw new OAuthError(400, 'invalid_request', 'missing required parameter assertion');
  let iss: unknown;
  try {
    iss = decodeJwt(params.assertion).iss;
  } catch {
    throw new OAuthError(400, 'invalid_grant', 'assertion is not a valid JWT');
  }
  if (typeof iss !== 'string' || !/^[\w-]{1,64}$/.test(iss)) throw new OAuthError(400, 'invalid_grant', 'assertion iss must be the user id of a machine user');
  params.client_id = jwtProfileClientId(iss);
}

/**
 * SEED 4.2 / 7.2: client_credentials names its scope, and only scopes this
 * service knows (the engine would silently drop unknown ones).
 */
function checkClientCredentialsScope(params: Params): void {
  if (typeof params.scope !== 'string' || !params.scope.trim()) throw new OAuthError(400, 'invalid_request', 'missing required parameter scope');
  const unknown = params.scope.split(' ').find((scope) => scope && !KNOWN_SCOPES.has(scope));
  if (unknown) throw new OAuthError(400, 'invalid_scope', `unknown scope ${unknown}`);
}

/** The JWT profile's engine client exists only for a current machine user: otherwise the grant is invalid. */
async function checkJwtProfileUser(ctx: KoaContextWithOIDC, params: Params): Promise<void> {
  const client = await (ctx.app as unknown as Provider).Client.find(String(params.client_id));
  if (!client) throw new OAuthError(400, 'invalid_grant', 'assertion iss is not an active machine user');
}

function checkMethods(route: string, params: Params, method: AuthMethod, basicTried: boolean): void {
  const grantType = params.grant_type;
  if (route === 'token' && grantType === JWT_BEARER_GRANT) {
    if (method !== 'none' || params.client_id !== undefined) {
      throw new OAuthError(400, 'invalid_request', 'the JWT profile grant takes no client authentication: the assertion authenticates the user');
    }
    nameJwtProfileClient(params);
    return;
  }
  const accepted = route === 'introspection' ? ACCEPTED.introspection : route === 'token' && grantType === 'client_credentials' ? ACCEPTED.client_credentials : undefined;
  if (method === 'none' && params.client_id === undefined) {
    throw new OAuthError(401, 'invalid_client', 'no client authentication provided', basicTried);
  }
  if (accepted && !accepted.has(method)) {
    throw new OAuthError(401, 'invalid_client', `client authentication method ${method} is not accepted here`, basicTried);
  }
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

export function endpointRules(jwt: JwtAccessTokens): EngineRule {
  const routes = new Map<string, string>([
    [ROUTES.token, 'token'],
    [ROUTES.introspection, 'introspection'],
    [ROUTES.revocation, 'revocation'],
  ]);
  return async (ctx, next) => {
    const route = ctx.method === 'POST' ? routes.get(ctx.path) : undefined;
    if (!route || !ctx.is('application/x-www-form-urlencoded')) return next();
    try {
      const raw = await readForm(ctx);
      // A form field decodes to NUL only from a literal NUL or from %00.
      if (raw.includes('\u0000') || raw.includes('%00')) throw new OAuthError(400, 'invalid_request', 'parameters must not contain NUL characters');
      const params = querystring.parse(raw);
      // For the throttle of failed authentication (throttle-rule.ts).
      ctx.state.grantType = params.grant_type;
      const method = presentedMethod(ctx, params);
      checkMethods(route, params, method, method === 'client_secret_basic');
      if (route === 'token' && params.grant_type === 'client_credentials') checkClientCredentialsScope(params);
      if (route === 'token' && params.grant_type === JWT_BEARER_GRANT) await checkJwtProfileUser(ctx, params);
      if (route !== 'token') {
        defaultTokenHint(params);
        await resolveJwtToken(params, jwt);
      }
      // Only the JWT profile (client_id from iss) and introspection/revocation
      // (hint, resolved JWT) change the parameters; otherwise the body goes on as sent.
      const rewritten = route !== 'token' || params.grant_type === JWT_BEARER_GRANT;
      (ctx.req as { body?: string }).body = rewritten ? querystring.stringify(params) : raw;
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      ctx.status = err.status;
      ctx.set('Cache-Control', 'no-store');
      if (err.basicTried) ctx.set('WWW-Authenticate', 'Basic realm="portcullis"');
      ctx.body = { error: err.error, error_description: err.message };
      return;
    }
    await next();
  };
}

/**
 * SEED 7.2 names two token endpoint errors differently from the engine:
 * a grant type the client may not use is `unauthorized_client`.
 */
export const tokenErrorNames: EngineRule = async (ctx, next) => {
  await next();
  if (ctx.oidc?.route !== 'token' || ctx.status !== 400) return;
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (body?.error === 'invalid_request' && body.error_description === 'requested grant type is not allowed for this client') {
    ctx.body = { ...body, error: 'unauthorized_client' };
  }
};
