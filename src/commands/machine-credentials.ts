import type { Announce } from '../storage/invalidation.ts';
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import type { UserRow } from '../storage/users.ts';
import {
  addMachineKey,
  addPersonalAccessToken,
  hasMachineSecret,
  machineKeyExists,
  personalAccessTokenExists,
  removeMachineKey,
  removeMachineSecret,
  removePersonalAccessToken,
  setMachineSecret,
} from '../storage/credentials.ts';
import { NotFound, fieldError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Principal } from '../domain/roles.ts';
import { assertMachine, userToActOn } from '../queries/get-user.ts';
import { assertMayManageUsers } from '../domain/permissions.ts';
import { generateSecret, secretDigest } from '../security/secrets.ts';
import { generateMachineKeyPair, serviceAccountKeyFile } from '../security/machine-keys.ts';

// Credentials of machine users (docs/api/users.md): JSON keys for the JWT
// profile grant, the client secret for client_credentials, personal access
// tokens. Each secret is returned once, in the response that creates it.

export interface AddKeyInput {
  type: 'KEY_TYPE_JSON';
  expirationDate?: string;
  /** Base64 of a PEM public key the caller keeps the private half of. */
  publicKey?: string;
}

export interface AddKeyResult {
  keyId: string;
  /** Base64 of the key file of docs/api/users.md; only when the service generated the key pair. */
  keyDetails?: string;
  details: WriteDetails;
}

export interface AddPatInput {
  expirationDate?: string;
}

// A larger RSA modulus only makes every signature check slower.
const MAX_RSA_BITS = 8192;

/** Each step of a credential write, in the write's transaction: the user, then what may be done to it. */
async function machineToManage(tx: Queryable, actor: Principal, orgId: string, userId: string, credentials: string): Promise<UserRow> {
  const user = await userToActOn(tx, actor, orgId, userId);
  assertMachine(user, credentials);
  return user;
}

/** An optional `expirationDate` (schema-checked RFC 3339): it must lie in the future. */
function expiry(expirationDate: string | undefined, now = new Date()): Date | null {
  if (expirationDate === undefined) return null;
  const at = new Date(expirationDate);
  if (Number.isNaN(at.getTime())) throw fieldError('expirationDate', 'must be a date-time such as 2030-01-01T00:00:00Z');
  if (at <= now) throw fieldError('expirationDate', 'must be in the future');
  return at;
}

/** The caller's own public key, as a JWK with `kid` = keyId: RSA of at least 2048 bits or EC P-256. */
function uploadedPublicJwk(publicKey: string, keyId: string): JWK {
  const pem = Buffer.from(publicKey, 'base64').toString('utf8');
  if (pem.includes('PRIVATE KEY')) throw fieldError('publicKey', 'must be a public key; never send a private key');
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw fieldError('publicKey', 'must be the base64 of a PEM public key');
  }
  const details = key.asymmetricKeyDetails ?? {};
  let alg: string;
  if (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048 && (details.modulusLength ?? 0) <= MAX_RSA_BITS) alg = 'RS256';
  else if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') alg = 'ES256';
  else throw fieldError('publicKey', `must be an RSA key of 2048 to ${MAX_RSA_BITS} bits or an EC P-256 key`);
  return { ...(key.export({ format: 'jwk' }) as JWK), kid: keyId, alg, use: 'sig' };
}

/**
 * `POST /management/v1/users/{userId}/keys`: with `publicKey`, that key is
 * registered; without, a key pair is generated and its private half returned
 * once as the key file (never stored).
 */
export async function issueMachineKey(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  input: AddKeyInput,
): Promise<AddKeyResult> {
  assertMayManageUsers(actor, orgId);
  const expiresAt = expiry(input.expirationDate);
  const keyId = newId();
  const keyPair = input.publicKey === undefined ? await generateMachineKeyPair(keyId) : undefined;
  const publicJwk = keyPair?.publicJwk ?? uploadedPublicJwk(input.publicKey!, keyId);
  const result = await db.transaction(async (tx): Promise<AddKeyResult> => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'keys');
    await addMachineKey(write, { id: keyId, userId: user.id, orgId, publicJwk, expiresAt });
    const details = writeDetails(write, orgId);
    if (!keyPair) return { keyId, details };
    const keyDetails = Buffer.from(serviceAccountKeyFile(keyId, user.id, keyPair.privatePem)).toString('base64');
    return { keyId, keyDetails, details };
  });
  // Cached look-ups of the user's keys (machine-key-cache.ts) see the new one at once.
  announce('clients');
  return result;
}

/** `DELETE /management/v1/users/{userId}/keys/{keyId}`: assertions signed with it fail from now on. */
export async function revokeMachineKey(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
  keyId: string,
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'keys');
    if (!(await machineKeyExists(tx, user.id, keyId))) throw new NotFound('key not found');
    await removeMachineKey(write, { id: keyId, userId: user.id, orgId });
    return { details: writeDetails(write, orgId) };
  });
  // Every node's cached look-up of the key (machine-key-cache.ts) forgets it.
  announce('clients');
  return result;
}

/** `PUT /management/v1/users/{userId}/secret`: a new client secret; the previous one stops working. */
export async function issueMachineSecret(
  db: Database,
  announce: Announce,
  secretKey: Buffer,
  actor: Principal,
  orgId: string,
  userId: string,
): Promise<{ clientId: string; clientSecret: string; details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const clientSecret = generateSecret();
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'client secrets');
    await setMachineSecret(write, { userId: user.id, orgId, digest: secretDigest(secretKey, clientSecret) });
    return { clientId: user.user_name, clientSecret, details: writeDetails(write, orgId) };
  });
  // The machine user's engine client carries the secret's digest.
  announce('clients');
  return result;
}

/** `DELETE /management/v1/users/{userId}/secret`. */
export async function revokeMachineSecret(
  db: Database,
  announce: Announce,
  actor: Principal,
  orgId: string,
  userId: string,
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const result = await db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'client secrets');
    if (!(await hasMachineSecret(tx, user.id))) throw new NotFound('the user has no client secret');
    await removeMachineSecret(write, { userId: user.id, orgId });
    return { details: writeDetails(write, orgId) };
  });
  announce('clients');
  return result;
}

/** `POST /management/v1/users/{userId}/pats`: the token is returned once; only its digest is kept. */
export async function issuePersonalAccessToken(
  db: Database,
  secretKey: Buffer,
  actor: Principal,
  orgId: string,
  userId: string,
  input: AddPatInput,
): Promise<{ tokenId: string; token: string; details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  const expiresAt = expiry(input.expirationDate);
  const tokenId = newId();
  const token = generateSecret();
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'personal access tokens');
    await addPersonalAccessToken(write, { id: tokenId, userId: user.id, orgId, digest: secretDigest(secretKey, token), expiresAt });
    return { tokenId, token, details: writeDetails(write, orgId) };
  });
}

/** `DELETE /management/v1/users/{userId}/pats/{tokenId}`: the token is refused from now on. */
export async function revokePersonalAccessToken(
  db: Database,
  actor: Principal,
  orgId: string,
  userId: string,
  tokenId: string,
): Promise<{ details: WriteDetails }> {
  assertMayManageUsers(actor, orgId);
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await machineToManage(tx, actor, orgId, userId, 'personal access tokens');
    if (!(await personalAccessTokenExists(tx, user.id, tokenId))) throw new NotFound('personal access token not found');
    await removePersonalAccessToken(write, { id: tokenId, userId: user.id, orgId });
    return { details: writeDetails(write, orgId) };
  });
}
