import type { Database } from '../storage/database.ts';
import { beginWrite, writeDetails, type Write, type WriteDetails } from '../storage/event-log.ts';
import { addOrg, domainTaken } from '../storage/orgs.ts';
import { addHuman } from '../storage/users.ts';
import { addMembership } from '../storage/memberships.ts';
import { AlreadyExists, PermissionDenied, fieldError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { generatedDomain, normaliseDomain } from '../domain/orgs.ts';
import { displayNameOf, type Gender } from '../domain/users.ts';
import { hasInstanceRole, isOrgRole, type Principal } from '../domain/roles.ts';
import { passwordPolicyViolation, type PasswordPolicy } from '../domain/password-policy.ts';
import type { PolicyKind } from '../domain/policies/kind.ts';
import type { PasswordComplexityPolicy } from '../domain/policies/password-complexity.ts';
import { instancePasswordPolicy } from '../queries/password-policy.ts';
import { hashPassword } from '../security/passwords.ts';

/** A human as the API describes it (the `human` of docs/api/orgs.md), already schema-valid. */
export interface HumanInput {
  userName: string;
  profile: {
    firstName: string;
    lastName: string;
    nickName?: string;
    displayName?: string;
    preferredLanguage?: string;
    gender?: Gender;
  };
  email: { email: string; isEmailVerified?: boolean };
  phone?: { phone: string; isPhoneVerified?: boolean };
  password?: string;
}

export interface SetupOrgInput {
  org: { name: string; domain?: string };
  human: HumanInput;
  roles?: string[];
}

export interface SetupOrgResult {
  details: WriteDetails;
  orgId: string;
  userId: string;
}

export interface OrgSettings {
  instanceDomain: string;
  /** The password complexity policy kind, with the built-in minimum length of `PASSWORD_MIN_LENGTH`; what applies is read per org. */
  passwordComplexity: PolicyKind<PasswordComplexityPolicy>;
}

/** Checks the rules a schema cannot express and hashes the password, before any write. */
export async function prepareHuman(human: HumanInput, policy: PasswordPolicy, field: string): Promise<{ passwordHash: string | null }> {
  if (human.password === undefined) return { passwordHash: null };
  const violation = passwordPolicyViolation(human.password, policy);
  if (violation) throw fieldError(`${field}.password`, violation);
  return { passwordHash: await hashPassword(human.password) };
}

/** Writes a human user (events + row); the caller owns the write. */
export async function writeHuman(write: Write, human: HumanInput, ids: { userId: string; orgId: string }, passwordHash: string | null): Promise<void> {
  await addHuman(write, {
    id: ids.userId,
    orgId: ids.orgId,
    userName: human.userName,
    firstName: human.profile.firstName,
    lastName: human.profile.lastName,
    nickName: human.profile.nickName || null,
    displayName: displayNameOf(human.profile),
    preferredLanguage: human.profile.preferredLanguage || null,
    gender: human.profile.gender ?? 'GENDER_UNSPECIFIED',
    email: human.email.email,
    emailVerified: human.email.isEmailVerified ?? false,
    phone: human.phone?.phone ?? null,
    phoneVerified: human.phone?.isPhoneVerified ?? false,
    passwordHash,
  });
}

function checkRoles(roles: string[] | undefined): string[] {
  const chosen = roles?.length ? roles : ['ORG_OWNER'];
  chosen.forEach((role, i) => {
    if (!isOrgRole(role)) throw fieldError(`roles[${i}]`, `unknown org role "${role}"`);
  });
  return [...new Set(chosen)];
}

/**
 * `POST /admin/v1/orgs/_setup` (docs/api/orgs.md): an organization, its
 * first (administrative) human user and that user's membership, in one
 * transaction with their events — all or nothing.
 */
export async function setupOrg(db: Database, settings: OrgSettings, actor: Principal | null, input: SetupOrgInput): Promise<SetupOrgResult> {
  if (actor && !hasInstanceRole(actor, 'IAM_OWNER')) throw new PermissionDenied('setting up an organization requires IAM_OWNER');
  const roles = checkRoles(input.roles);
  const domain = input.org.domain?.trim() ? normaliseDomain(input.org.domain) : generatedDomain(input.org.name, settings.instanceDomain);
  // The new org has no policy of its own yet: the instance default applies.
  const policy = await instancePasswordPolicy(db, settings.passwordComplexity);
  const { passwordHash } = await prepareHuman(input.human, policy, 'human');
  const orgId = newId();
  const userId = newId();

  return db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor ?? null);
    if (await domainTaken(tx, domain)) throw new AlreadyExists(`an organization with the domain "${domain}" already exists`);
    await addOrg(write, { id: orgId, name: input.org.name, domain });
    await writeHuman(write, input.human, { userId, orgId }, passwordHash);
    await addMembership(write, { userId, scope: 'org', scopeId: orgId, roles, resourceOwner: orgId });
    return { details: writeDetails(write, orgId), orgId, userId };
  });
}
