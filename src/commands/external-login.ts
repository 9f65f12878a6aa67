import type { ExternalIdentity } from '../outbound/upstream.ts';
import { newId } from '../domain/ids.ts';
import type { Database } from '../storage/database.ts';
import { beginWrite, type Write } from '../storage/event-log.ts';
import { findLinkedUserId, insertLink, recordExternalLogin, updateEmailFromUpstream } from '../storage/idp-links.ts';
import type { StoredIdp } from '../storage/idps.ts';
import { changePhone, changeProfile } from '../storage/user-changes.ts';
import { emailOrLoginTaken, findUser, userNameTaken, type UserRow } from '../storage/users.ts';
import { writeHuman, type HumanInput } from './setup-org.ts';
import { countFailedPassword } from './password-login.ts';

/**
 * What a sign-in through an external provider leads to (docs/idps.md): the
 * linked user signs in; a locked or deactivated one is refused; without a
 * link the login offers creation or linking, unless the provider creates
 * users itself (isAutoCreation).
 */
export type ExternalOutcome = { result: 'signed-in'; userId: string; created: boolean } | { result: 'refused' } | { result: 'unlinked' };

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]+$/;
const text = (value: string | undefined) =>
  (value ?? '')
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, 200);

/** The profile the upstream gives, in our fields: names never empty, a language only when it is a language tag. */
export function profileOf(identity: ExternalIdentity): HumanInput['profile'] {
  const [first, ...rest] = text(identity.displayName).split(' ');
  return {
    firstName: text(identity.givenName) || first || text(identity.preferredUsername) || '-',
    lastName: text(identity.familyName) || rest.join(' ') || '-',
    ...(text(identity.displayName) ? { displayName: text(identity.displayName) } : {}),
    ...(identity.locale && identity.locale.length <= 10 && LANGUAGE_TAG.test(identity.locale) ? { preferredLanguage: identity.locale } : {}),
  };
}

/** The new user's login name: the preferred username, else the email address. */
function userNameOf(identity: ExternalIdentity): string | undefined {
  const name = (identity.preferredUsername ?? '').trim();
  if (name && /^\S{1,200}$/.test(name)) return name;
  return identity.email && EMAIL.test(identity.email) ? identity.email : undefined;
}

// RFC 3966 global-number-digits, as the API takes phone numbers; directories often write spaces between the groups.
const GLOBAL_PHONE = /^\+[0-9().-]*[0-9][0-9().-]*$/;

/** The upstream's phone number when it is a global one (spaces dropped); any other is left out, unverified either way. */
function phoneOf(identity: ExternalIdentity): HumanInput['phone'] {
  const phone = (identity.phone ?? '').replace(/\s/g, '');
  return phone.length <= 50 && GLOBAL_PHONE.test(phone) ? { phone, isPhoneVerified: false } : undefined;
}

/** The human an auto-creation makes, or undefined when the upstream gave too little (no usable email or name). */
export function humanFrom(identity: ExternalIdentity): HumanInput | undefined {
  const userName = userNameOf(identity);
  if (!userName || !identity.email || !EMAIL.test(identity.email)) return undefined;
  const phone = phoneOf(identity);
  return { userName, profile: profileOf(identity), email: { email: identity.email, isEmailVerified: identity.emailVerified }, ...(phone ? { phone } : {}) };
}

async function applyUpdate(write: Write, user: UserRow, identity: ExternalIdentity): Promise<void> {
  const profile = profileOf(identity);
  await changeProfile(
    write,
    { id: user.id, orgId: user.org_id },
    {
      firstName: profile.firstName,
      lastName: profile.lastName,
      nickName: user.nick_name,
      displayName: profile.displayName ?? `${profile.firstName} ${profile.lastName}`,
      preferredLanguage: profile.preferredLanguage ?? user.preferred_language,
      gender: user.gender ?? 'GENDER_UNSPECIFIED',
    },
  );
  if (identity.email && EMAIL.test(identity.email) && (identity.email !== user.email || identity.emailVerified !== Boolean(user.email_verified))) {
    await updateEmailFromUpstream(write, { id: user.id, orgId: user.org_id }, identity.email, identity.emailVerified);
  }
  // A phone the upstream stopped giving stays: the user may have added it here.
  const phone = phoneOf(identity);
  if (phone && phone.phone !== user.phone) await changePhone(write, { id: user.id, orgId: user.org_id }, { phone: phone.phone, verified: false });
}

/** The linked user signs in (its profile updated with isAutoUpdate, `user.human.externallogin.check.succeeded` recorded); a user not active is refused. */
async function signInLinked(db: Database, idp: StoredIdp, identity: ExternalIdentity, userId: string): Promise<ExternalOutcome> {
  const user = await findUser(db, userId);
  if (user?.state !== 'active') return { result: 'refused' };
  await db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    if (idp.options.isAutoUpdate) await applyUpdate(write, user, identity);
    await recordExternalLogin(write, { id: user.id, orgId: user.org_id }, idp.id);
  });
  return { result: 'signed-in', userId, created: false };
}

/**
 * A user made from the upstream's profile in `orgId` and linked to it, in
 * one transaction; undefined when the login name or email is taken or the
 * profile lacks what a user needs (then the login offers the form).
 */
export async function createLinkedUser(
  db: Database,
  orgId: string,
  idp: StoredIdp,
  identity: ExternalIdentity,
  human: HumanInput,
): Promise<string | undefined> {
  const userId = newId();
  const created = await db.transaction(async (tx) => {
    if ((await userNameTaken(tx, orgId, human.userName)) || (await emailOrLoginTaken(tx, human.email.email))) return false;
    const write = await beginWrite(tx, null);
    await writeHuman(write, human, { userId, orgId }, null);
    await insertLink(
      write,
      { userId, idpId: idp.id, providedUserId: identity.id, providedUserName: identity.preferredUsername ?? identity.email ?? '' },
      orgId,
    );
    await recordExternalLogin(write, { id: userId, orgId }, idp.id);
    return true;
  });
  return created ? userId : undefined;
}

/** After the upstream answered: the linked user, an auto-created one, or none yet. */
export async function externalSignIn(db: Database, idp: StoredIdp, identity: ExternalIdentity, orgId: string | undefined): Promise<ExternalOutcome> {
  const linked = await findLinkedUserId(db, idp.id, identity.id);
  if (linked) return signInLinked(db, idp, identity, linked);
  const human = humanFrom(identity);
  if (idp.options.isAutoCreation && orgId && human) {
    const userId = await createLinkedUser(db, orgId, idp, identity, human);
    if (userId) return { result: 'signed-in', userId, created: true };
  }
  return { result: 'unlinked' };
}

/** Links an existing user (who just proved its own sign-in) to the upstream identity; false when that identity is someone's already. */
export async function linkExternal(db: Database, user: { id: string; orgId: string }, idp: StoredIdp, identity: ExternalIdentity): Promise<boolean> {
  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, null);
    const linked = await insertLink(
      write,
      { userId: user.id, idpId: idp.id, providedUserId: identity.id, providedUserName: identity.preferredUsername ?? identity.email ?? '' },
      user.orgId,
    );
    if (linked) await recordExternalLogin(write, user, idp.id);
    return linked;
  });
}

/**
 * A directory refused the typed password of one of its entries (an LDAP
 * provider's): the user linked to that entry counts it as a wrong password
 * of its own, under its org's lockout policy (docs/idps.md, LDAP). Answers
 * whether that user is locked now, or was already: its sign-ins then get
 * the wrong-password answer whatever the password, as a local one's do.
 * A name that named no entry (`entryId` undefined) counts nowhere, but
 * looks a link up all the same, so that the answer's timing does not tell
 * it from a known name (docs/decisions.md, "LDAP unknown names").
 */
export async function countDirectoryRefusal(db: Database, idpId: string, entryId: string | undefined, onLockChange: () => void): Promise<boolean> {
  // No identity has an empty id (identityOf refuses one), so the lookup finds nothing.
  const user = await linkedUser(db, idpId, entryId ?? '');
  if (!user || user.state === 'inactive') return false;
  if (user.state === 'locked') return true;
  return (await countFailedPassword(db, user, onLockChange)) === 'locked';
}

/** Whether the user linked to an upstream identity is locked (a directory's right password then gets the wrong-password answer too). */
export async function linkedUserLocked(db: Database, idpId: string, providedUserId: string): Promise<boolean> {
  return (await linkedUser(db, idpId, providedUserId))?.state === 'locked';
}

async function linkedUser(db: Database, idpId: string, providedUserId: string): Promise<UserRow | undefined> {
  const userId = await findLinkedUserId(db, idpId, providedUserId);
  return userId ? findUser(db, userId) : undefined;
}
