import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { FindAccount, KoaContextWithOIDC } from 'oidc-provider';
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { MachineKeyLookup } from '../../storage/machine-key-cache.ts';
import { JWT_BEARER_GRANT } from '../../domain/grant-types.ts';
import { issueAccessToken } from './issue.ts';
import { requestedScopes } from '../scopes.ts';
import { invalidGrant } from '../oauth-errors.ts';

export const JWT_BEARER_PARAMETERS = ['assertion', 'scope'];

/** An assertion may live at most one hour (docs/oidc.md, JWT profile). */
const MAX_ASSERTION_LIFETIME = 3600;
const CLOCK_SKEW = 60;
const ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

// Importing an RSA key costs more than verifying with it: the import of a
// key seen before is reused. Whether the key is still registered is asked
// on every request (machine-key-cache.ts: a deleted key fails at once).
const imported = new Map<string, Promise<ImportedKey>>();
const MAX_IMPORTED = 1000;

function importOnce(jwk: JWK, alg: string): Promise<ImportedKey> {
  const id = `${alg}:${jwk.kty}:${jwk.n ?? ''}${jwk.x ?? ''}${jwk.y ?? ''}:${jwk.e ?? ''}`;
  let key = imported.get(id);
  if (!key) {
    if (imported.size >= MAX_IMPORTED) imported.clear();
    key = importJWK(jwk, alg);
    key.catch(() => imported.delete(id));
    imported.set(id, key);
  }
  return key;
}

/** The machine user's registered public key that the assertion names with `kid`. */
async function assertionKey(machineKeys: MachineKeyLookup, userId: string, assertion: string): Promise<{ keyId: string; key: ImportedKey }> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw invalidGrant('assertion is not a valid JWT');
  }
  if (!header.kid || !header.alg || !ASSERTION_ALGS.includes(header.alg))
    throw invalidGrant('assertion must name its key (kid) and use an asymmetric algorithm');
  const jwk = await machineKeys(userId, header.kid);
  if (!jwk) throw invalidGrant('the key of the assertion is unknown, expired or deleted');
  return { keyId: header.kid, key: await importOnce(jwk, header.alg) };
}

/** RFC 7523 3: signature, iss = sub = user id, aud = this issuer, a bounded lifetime. */
async function verifiedAssertion(assertion: string, key: ImportedKey, userId: string, audiences: string[]): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(assertion, key, {
      issuer: userId,
      subject: userId,
      audience: audiences,
      clockTolerance: CLOCK_SKEW,
      requiredClaims: ['iat', 'exp'],
      algorithms: ASSERTION_ALGS,
    }));
  } catch (err) {
    throw invalidGrant(`assertion rejected: ${(err as Error).message}`);
  }
  const now = Math.floor(Date.now() / 1000);
  if (payload.iat! > now + CLOCK_SKEW) throw invalidGrant('assertion iat is in the future');
  if (payload.exp! - now > MAX_ASSERTION_LIFETIME + CLOCK_SKEW) throw invalidGrant('assertion must not be valid for more than one hour');
  return payload;
}

/**
 * What makes an assertion without `jti` the same assertion: the text its
 * signature covers (header and claims, as sent). Its signature part is no
 * name for it: base64url has several spellings of the same bytes (padding,
 * the unused low bits of the last character) that the verifier decodes
 * alike, and an ECDSA signature (r, s) has a twin (r, n − s) that verifies
 * too — each would pass for a new assertion. The signed text cannot be
 * spelled otherwise without breaking the signature.
 */
function signedTextDigest(assertion: string): string {
  return createHash('sha256')
    .update(assertion.slice(0, assertion.lastIndexOf('.')))
    .digest('base64url');
}

/**
 * RFC 7523 3 (jti): an assertion is used once within its lifetime. One
 * without a `jti` is known by its signed text instead, so the same assertion
 * presented again, in any spelling, is a replay too (the two kinds cannot
 * collide: a signed-text id has a prefix a `jti` is not given).
 */
async function refuseReplay(provider: Provider, userId: string, assertion: string, payload: JWTPayload): Promise<void> {
  const id = payload.jti === undefined ? `signed:${signedTextDigest(assertion)}` : `jti:${String(payload.jti)}`;
  const unique = await (provider.ReplayDetection as unknown as { unique(iss: string, jti: string, exp: number): Promise<boolean> }).unique(
    userId,
    id,
    payload.exp!,
  );
  if (!unique) throw invalidGrant('assertion was already used');
}

/**
 * `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 2.1): a
 * machine user signs an assertion with its key file; no client
 * authentication. Answers an access token and the machine user's ID token.
 */
export function jwtBearerGrant(machineKeys: MachineKeyLookup, audiences: string[], findAccount: FindAccount) {
  return async function jwtProfile(ctx: KoaContextWithOIDC): Promise<void> {
    const provider = ctx.oidc.provider as Provider;
    const client = ctx.oidc.client as unknown as { machine_user_id?: string };
    const userId = client.machine_user_id;
    if (!userId) throw invalidGrant('assertion iss is not a machine user');
    const assertion = String(ctx.oidc.params!.assertion);
    const { keyId, key } = await assertionKey(machineKeys, userId, assertion);
    const payload = await verifiedAssertion(assertion, key, userId, audiences);
    await refuseReplay(provider, userId, assertion, payload);
    const scope = requestedScopes(ctx.oidc.params!.scope);
    ctx.body = await issueAccessToken(ctx, {
      accountId: userId,
      scope,
      gty: JWT_BEARER_GRANT,
      idToken: scope.includes('openid'),
      findAccount,
      machineKeyId: keyId,
    });
  };
}
