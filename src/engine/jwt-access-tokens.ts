import type Provider from 'oidc-provider';
import { SignJWT, createLocalJWKSet, importJWK, jwtVerify, type JWK } from 'jose';
import { publicJwks } from '../keys/signing-keys.ts';

/**
 * Access tokens of apps and machine users set to JWT (SPEC 2.1, RFC 9068
 * style, `typ: at+jwt`). The engine's own JWT access tokens are not stored,
 * so they could be neither revoked nor introspected nor used at userinfo.
 * Here every access token stays a stored engine record; only its wire
 * format is a JWT whose `jti` is the record's id (ENGINE-NOTES §15).
 */
export interface JwtAccessTokens {
  /** The record id a JWT access token of ours stands for, or undefined. */
  tokenIdOf(value: string): Promise<string | undefined>;
}

interface TokenLike {
  jti: string;
  clientId: string;
  accountId?: string;
  scope?: string;
  extra?: Record<string, unknown>;
  /** Set by token exchange: the requested token type decides the format. */
  format_override?: 'jwt' | 'opaque';
  client?: { access_token_type?: string; project_id?: string; machine_user_id?: string };
}

interface TokenClass {
  prototype: { getValueAndPayload(this: TokenLike): Promise<{ value: string; payload: unknown }> };
  find(value: string, options?: unknown): Promise<unknown>;
}

export function looksLikeJwt(value: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value);
}

export function applyJwtAccessTokens(provider: Provider, issuer: string, signingKeys: JWK[]): JwtAccessTokens {
  const current = signingKeys[0];
  if (!current) throw new Error('no signing key');
  const privateKey = importJWK(current, 'RS256');
  const publicKeys = createLocalJWKSet(publicJwks(signingKeys));

  const signJwt = async (token: TokenLike, iat: number, exp: number): Promise<string> => {
    const client = token.client!;
    const requested = Array.isArray(token.extra?.aud) ? (token.extra.aud as string[]) : [];
    const audience = [...new Set([token.clientId, ...(client.project_id ? [client.project_id] : []), ...requested])];
    return new SignJWT({
      client_id: token.clientId,
      ...(token.scope ? { scope: token.scope } : {}),
      ...(token.extra?.act ? { act: token.extra.act } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', kid: current.kid!, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(token.accountId ?? client.machine_user_id ?? token.clientId)
      .setAudience(audience)
      .setJti(token.jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(await privateKey);
  };

  const tokenIdOf = async (value: string): Promise<string | undefined> => {
    if (value.length > 8192 || !looksLikeJwt(value)) return undefined;
    try {
      const { payload } = await jwtVerify(value, publicKeys, { issuer, typ: 'at+jwt', algorithms: ['RS256'] });
      return typeof payload.jti === 'string' ? payload.jti : undefined;
    } catch {
      return undefined;
    }
  };

  // Access tokens of users (AccessToken) and of machine users' client
  // credentials (ClientCredentials) alike.
  for (const model of [provider.AccessToken, provider.ClientCredentials] as unknown as TokenClass[]) {
    const opaqueValue = model.prototype.getValueAndPayload;
    model.prototype.getValueAndPayload = async function jwtOrOpaque(this: TokenLike) {
      const stored = await opaqueValue.call(this);
      const jwt = this.format_override ? this.format_override === 'jwt' : this.client?.access_token_type === 'jwt';
      if (!jwt) return stored;
      const { iat, exp } = stored.payload as { iat: number; exp: number };
      return { value: await signJwt(this, iat, exp), payload: stored.payload };
    };
    const findStored = model.find.bind(model);
    model.find = async (value: string, options?: unknown) => {
      if (typeof value === 'string' && looksLikeJwt(value)) {
        const jti = await tokenIdOf(value);
        return jti ? findStored(jti, options) : undefined;
      }
      return findStored(value, options);
    };
  }

  return { tokenIdOf };
}
