import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import type { Principal } from '../domain/roles.ts';
import { PreconditionFailed, ScimInvalid } from '../domain/scim/errors.ts';
import { etagOf, tagCondition } from '../domain/scim/etag.ts';
import { canonicalResource, resourceOfUser, userOfResource, type ScimUser, type StoredScimUser, type ValidUserResource } from '../domain/scim/user.ts';
import { applyPatch, patchOperations } from '../domain/scim/patch.ts';
import { changeScimUser, createScimUser, removeScimUser, type Precondition } from '../commands/scim-users.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import { validator } from '../admin/validate.ts';
import { userResourceSchema } from './user-schema.ts';

// The four writes of a User from a request's body and If-Match: what
// `/Users` and `/Bulk` operations share, so both check and write alike.

const checkResource = validator<ValidUserResource>(userResourceSchema);

/** A body (or a patched resource) as the user to store: canonical names, then the schema's limits. */
function resourceOf(body: unknown): ValidUserResource {
  return checkResource(canonicalResource(body));
}

/** Passwords are set when a user is created (docs/scim.md); changing one is the user's own business or an admin's reset. */
function withoutPassword(resource: ValidUserResource): ScimUser {
  if (resource.password !== undefined) throw new ScimInvalid('invalidValue', 'password is accepted when a user is created (POST) only');
  return userOfResource(resource);
}

/**
 * An If-Match value (RFC 7644 3.14), read at once so a malformed one
 * changes nothing: met by the user's current version, else 412; none
 * (undefined or empty): any version.
 */
export function preconditionOf(ifMatch: string | undefined): Precondition {
  if (!ifMatch) return () => {};
  const meets = tagCondition(ifMatch, 'If-Match');
  return (current) => {
    if (!meets(current.version)) throw new PreconditionFailed(`the User has changed: its version is now ${etagOf(current.version)}`);
  };
}

export interface UserWrites {
  create(actor: Principal, orgId: string, body: unknown): Promise<StoredScimUser>;
  replace(actor: Principal, orgId: string, userId: string, body: unknown, precondition: Precondition): Promise<StoredScimUser>;
  patch(actor: Principal, orgId: string, userId: string, body: unknown, precondition: Precondition): Promise<StoredScimUser>;
  remove(actor: Principal, orgId: string, userId: string, precondition: Precondition): Promise<void>;
}

export function userWrites(db: Database, announce: Announce, settings: OrgSettings): UserWrites {
  return {
    async create(actor, orgId, body) {
      const resource = resourceOf(body);
      return createScimUser(db, announce, settings, actor, orgId, userOfResource(resource), resource.password);
    },
    async replace(actor, orgId, userId, body, precondition) {
      const user = withoutPassword(resourceOf(body));
      return changeScimUser(db, announce, actor, orgId, userId, () => user, precondition);
    },
    async patch(actor, orgId, userId, body, precondition) {
      const operations = patchOperations(body);
      const patched = (current: StoredScimUser) => withoutPassword(resourceOf(applyPatch(resourceOfUser(current), operations)));
      return changeScimUser(db, announce, actor, orgId, userId, patched, precondition);
    },
    remove: (actor, orgId, userId, precondition) => removeScimUser(db, announce, actor, orgId, userId, precondition),
  };
}
