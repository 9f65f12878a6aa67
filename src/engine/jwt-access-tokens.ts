import { createPrivateKey, sign as rsaSign, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { publicJwks } from '../keys/signing-keys.ts';
import { hookClaimsOf } from './token-hooks.ts';

/**
 * The JWT wire format of access tokens of apps and machine users set to JWT
 * (RFC 9068 style, `typ: at+jwt`). Every access token stays a stored engine
 * record — so it can be revoked, introspected and used at userinfo — and only
 * its value is a JWT whose `jti` is the record's id. engine-overrides.ts puts
 * this format into the engine's token models.
 */
export interface JwtAccessTokens {
  /** The JWT value of a token record. */
  sign(token: JwtTokenRecord, iat: number, exp: number): Promise<string>;
  /** The record id a JWT access token of ours stands for, or undefined. */
  tokenIdOf(value: string): Promise<string | undefined>;
}

export interface JwtTokenRecord {
  jti: string;
  clientId: string;
  accountId?: string;
  scope?: string;
  /** The thumbprint of the DPoP key the token is bound to. */
  jkt?: string;
  extra?: Record<string, unknown>;
  client?: { project_id?: string; machine_user_id?: string };
}

export function looksLikeJwt(value: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value);
}

export function jwtAccessTokens(issuer: string, signingKeys: JWK[]): JwtAccessTokens {
  const current = signingKeys[0];
  if (!current) throw new Error('no signing key');
  const privateKey = createPrivateKey({ key: current as JsonWebKey, format: 'jwk' });
  const publicKeys = createLocalJWKSet(publicJwks(signingKeys));
  const encodedHeader = Buffer.from(JSON.stringify({ alg: 'RS256', kid: current.kid!, typ: 'at+jwt' })).toString('base64url');

  return {
    // A JWS compact serialisation (RFC 7515 7.1) of claims we build
    // ourselves, signed by node:crypto's one-shot RSASSA-PKCS1-v1_5 SHA-256
    // (RS256, RFC 7518 3.3). On this hot path of client_credentials it
    // costs about 8 % less CPU than WebCrypto's signature, which jose uses,
    // and jose's SignJWT would also deep-copy and re-validate the claims
    // (bench/PROFILE.md). Tests verify these tokens with jose.
    async sign(token, iat, exp) {
      const client = token.client!;
      const requested = Array.isArray(token.extra?.aud) ? (token.extra.aud as string[]) : [];
      const claims = {
        // First, so no claim below can be replaced (the hooks' reserved ones are dropped already).
        ...hookClaimsOf(token.extra),
        client_id: token.clientId,
        ...(token.scope ? { scope: token.scope } : {}),
        ...(token.extra?.act ? { act: token.extra.act } : {}),
        // RFC 9449 6.1: the key a resource server must see the proof signed with.
        ...(token.jkt ? { cnf: { jkt: token.jkt } } : {}),
        iss: issuer,
        sub: token.accountId ?? client.machine_user_id ?? token.clientId,
        aud: [...new Set([token.clientId, ...(client.project_id ? [client.project_id] : []), ...requested])],
        jti: token.jti,
        iat,
        exp,
      };
      const signingInput = `${encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${signingInput}.${rsaSign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`;
    },
    async tokenIdOf(value) {
      if (value.length > 8192 || !looksLikeJwt(value)) return undefined;
      try {
        const { payload } = await jwtVerify(value, publicKeys, { issuer, typ: 'at+jwt', algorithms: ['RS256'] });
        return typeof payload.jti === 'string' ? payload.jti : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
