import type { Queryable } from '../storage/database.ts';
import { findPolicy } from '../storage/policies.ts';
import { withDefaults, type PolicyKind } from '../domain/policies/kind.ts';
import type { PasswordComplexityPolicy } from '../domain/policies/password-complexity.ts';
import { effectivePolicy } from './policies.ts';

// The password complexity policy that a new password must meet, read from
// the database at each check (no cache): a change applies to the very next
// password set, on every node.

/** What applies to a user of `orgId`: the org's override, else the instance default, else the built-in one. */
export function orgPasswordPolicy(db: Queryable, kind: PolicyKind<PasswordComplexityPolicy>, orgId: string): Promise<PasswordComplexityPolicy> {
  return effectivePolicy(db, kind, orgId);
}

/** What applies to an org that does not exist yet (the first user of an org being set up): the instance default. */
export async function instancePasswordPolicy(db: Queryable, kind: PolicyKind<PasswordComplexityPolicy>): Promise<PasswordComplexityPolicy> {
  return withDefaults(kind, (await findPolicy(db, kind.name, null))?.settings as Partial<PasswordComplexityPolicy> | undefined);
}
