import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type WriteDetails } from '../storage/event-log.ts';
import { findUser } from '../storage/users.ts';
import { addPasskey, advanceCounter, findPasskeyByCredential, passkeysOf, removePasskey } from '../storage/passkeys.ts';
import type { ChallengeStore } from '../security/challenges.ts';
import { loginName } from '../domain/users.ts';
import { newId } from '../domain/ids.ts';
import { NotFound } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import { userToActOn } from '../queries/get-user.ts';

/** The relying party (WebAuthn 5.1): its id is the issuer's host name (or WEBAUTHN_RP_ID), its origin the issuer's origin. */
export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingPartyOf(issuer: string, rpId?: string): RelyingParty {
  const url = new URL(issuer);
  return { id: rpId ?? url.hostname, origin: url.origin };
}

/** Options for the browser's navigator.credentials call, and the id of their single-use challenge. */
export interface Ceremony {
  challengeId: string;
  options: unknown;
}

/** Why a WebAuthn response was refused; each is a message on the page, none stores anything. */
export type PasskeyRefusal = 'malformed' | 'challenge' | 'rejected';

export type PasskeyOutcome<T> = { ok: true; value: T } | { ok: false; reason: PasskeyRefusal };

function parseJson<T>(text: string): T | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value &&
      typeof value === 'object' &&
      typeof (value as { id?: unknown }).id === 'string' &&
      typeof (value as { response?: unknown }).response === 'object'
      ? (value as T)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Registration of a passkey for a signed-in user: a resident key with user verification (WebAuthn Level 2). */
export async function registrationCeremony(db: Database, challenges: ChallengeStore, rp: RelyingParty, userId: string): Promise<Ceremony> {
  const user = await findUser(db, userId);
  if (!user) throw new NotFound('user not found');
  const existing = await passkeysOf(db, userId);
  const options = await generateRegistrationOptions({
    rpName: 'Portcullis',
    rpID: rp.id,
    userName: loginName(user.user_name, user.primary_domain),
    userDisplayName: user.display_name ?? user.user_name,
    userID: Buffer.from(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  return { challengeId: await challenges.put({ challenge: options.challenge, purpose: 'register', userId }), options };
}

export async function completeRegistration(
  db: Database,
  challenges: ChallengeStore,
  rp: RelyingParty,
  userId: string,
  challengeId: string,
  responseText: string,
  name: string,
): Promise<PasskeyOutcome<string>> {
  const response = parseJson<RegistrationResponseJSON>(responseText);
  if (!response) return { ok: false, reason: 'malformed' };
  const challenge = await challenges.take(challengeId);
  if (challenge?.purpose !== 'register' || challenge.userId !== userId) return { ok: false, reason: 'challenge' };
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
  } catch {
    return { ok: false, reason: 'rejected' };
  }
  if (!verified.verified) return { ok: false, reason: 'rejected' };
  const { credential } = verified.registrationInfo;
  const id = newId();
  const added = await db.transaction(async (tx) => {
    const user = await findUser(tx, userId);
    if (!user) return false;
    return addPasskey(
      await beginWrite(tx, { userId }),
      { id: user.id, orgId: user.org_id },
      { id, credentialId: credential.id, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports ?? [], name },
    );
  });
  return added ? { ok: true, value: id } : { ok: false, reason: 'rejected' };
}

/**
 * A sign-in with a passkey: with no user (passwordless: the authenticator
 * offers its discoverable credentials) or as the second factor of a user
 * whose password was right (only that user's passkeys).
 */
export async function authenticationCeremony(db: Database, challenges: ChallengeStore, rp: RelyingParty, userId?: string): Promise<Ceremony> {
  const allow = userId ? (await passkeysOf(db, userId)).map((p) => ({ id: p.credential_id, transports: p.transports })) : undefined;
  const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', ...(allow ? { allowCredentials: allow } : {}) });
  return { challengeId: await challenges.put({ challenge: options.challenge, purpose: 'authenticate', ...(userId ? { userId } : {}) }), options };
}

/** Verifies an assertion; answers the user it signs in. User verification is required; the challenge is spent whatever the outcome. */
export async function completeAuthentication(
  db: Database,
  challenges: ChallengeStore,
  rp: RelyingParty,
  challengeId: string,
  responseText: string,
  userId?: string,
): Promise<PasskeyOutcome<string>> {
  const response = parseJson<AuthenticationResponseJSON>(responseText);
  if (!response) return { ok: false, reason: 'malformed' };
  const challenge = await challenges.take(challengeId);
  if (challenge?.purpose !== 'authenticate' || challenge.userId !== userId) return { ok: false, reason: 'challenge' };
  const passkey = await findPasskeyByCredential(db, response.id);
  if (!passkey || (userId && passkey.user_id !== userId)) return { ok: false, reason: 'rejected' };
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: Number(passkey.counter),
        transports: passkey.transports,
      },
    });
  } catch {
    return { ok: false, reason: 'rejected' };
  }
  if (!verified.verified || !(await advanceCounter(db, passkey.id, verified.authenticationInfo.newCounter))) return { ok: false, reason: 'rejected' };
  return { ok: true, value: passkey.user_id };
}

/** A user removes one of their own passkeys (the security page). */
export async function removeOwnPasskey(db: Database, userId: string, passkeyId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const user = await findUser(tx, userId);
    return Boolean(user) && removePasskey(await beginWrite(tx, { userId }), { id: user!.id, orgId: user!.org_id }, passkeyId);
  });
}

/** `DELETE /management/v1/users/{userId}/passkeys/{passkeyId}` (ORG_OWNER, ORG_USER_MANAGER holding every role of the user): `user.passkey.removed`. */
export async function removeUserPasskey(db: Database, actor: Principal, orgId: string, userId: string, passkeyId: string): Promise<{ details: WriteDetails }> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const user = await userToActOn(tx, actor, orgId, userId);
    if (!(await removePasskey(write, { id: user.id, orgId }, passkeyId))) throw new NotFound('passkey not found');
    return { details: writeDetails(write, orgId) };
  });
}
