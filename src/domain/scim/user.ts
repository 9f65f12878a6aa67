import { ScimInvalid } from './errors.ts';
import { etagOf } from './etag.ts';

// A human user as a SCIM 2.0 User resource (RFC 7643 4.1), and back. The
// service keeps a subset of the core schema: what it does not keep is
// named in IGNORED_ATTRIBUTES and passed over on input, so a client's
// default mappings (Entra ID's title or phoneNumbers, an extension's
// attributes) do not fail; a name of no schema at all is refused.

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** What the service stores of a SCIM User. */
export interface ScimUser {
  userName: string;
  externalId: string | null;
  givenName: string;
  familyName: string;
  /** null: "givenName familyName", as every human's default display name. */
  displayName: string | null;
  nickName: string | null;
  preferredLanguage: string | null;
  email: string;
  active: boolean;
}

/** A stored human user with its identity and dates, to be shown as a resource. */
export interface StoredScimUser extends ScimUser {
  id: string;
  displayName: string;
  created: Date;
  lastModified: Date;
  /** Moves with every write of the user: `meta.version` and the ETag (RFC 7644 3.14). */
  version: string;
}

/** The User attributes the service keeps, by their canonical spelling (names are case-insensitive, RFC 7643 2.1). */
const SIMPLE_ATTRIBUTES = ['userName', 'externalId', 'displayName', 'nickName', 'preferredLanguage', 'active', 'password'] as const;
const NAME_SUB_ATTRIBUTES = ['givenName', 'familyName'] as const;
const EMAIL_SUB_ATTRIBUTES = ['value', 'type', 'primary', 'display'] as const;
/** Set by the service: ignored in a POST or PUT body (RFC 7644 3.3, 3.5.1), refused as a PATCH target. */
const READ_ONLY_ATTRIBUTES = ['id', 'meta', 'schemas'] as const;
/** Core User attributes (RFC 7643 4.1) the service does not keep; passed over on input. */
const IGNORED_ATTRIBUTES = [
  'title',
  'userType',
  'profileUrl',
  'locale',
  'timezone',
  'phoneNumbers',
  'ims',
  'photos',
  'addresses',
  'groups',
  'entitlements',
  'roles',
  'x509Certificates',
];
const IGNORED_NAME_SUB_ATTRIBUTES = ['formatted', 'middleName', 'honorificPrefix', 'honorificSuffix'];

type AttributeKind = 'simple' | 'name' | 'emails' | 'readOnly' | 'ignored';

const canonical = new Map<string, { name: string; kind: AttributeKind }>([
  ...SIMPLE_ATTRIBUTES.map((name) => [name.toLowerCase(), { name, kind: 'simple' as const }] as const),
  ['name', { name: 'name', kind: 'name' }],
  ['emails', { name: 'emails', kind: 'emails' }],
  ...READ_ONLY_ATTRIBUTES.map((name) => [name.toLowerCase(), { name, kind: 'readOnly' as const }] as const),
  ...IGNORED_ATTRIBUTES.map((name) => [name.toLowerCase(), { name, kind: 'ignored' as const }] as const),
]);

/** A top-level attribute name in its canonical spelling and what the service does with it; undefined for a name of no schema. */
export function userAttribute(name: string): { name: string; kind: AttributeKind } | undefined {
  return canonical.get(name.toLowerCase());
}

/** A sub-attribute of `name` or of an email: its canonical spelling, 'ignored', or undefined when no schema defines it. */
export function subAttribute(parent: 'name' | 'emails', sub: string): string | 'ignored' | undefined {
  const lower = sub.toLowerCase();
  const kept = (parent === 'name' ? NAME_SUB_ATTRIBUTES : EMAIL_SUB_ATTRIBUTES) as readonly string[];
  const found = kept.find((s) => s.toLowerCase() === lower);
  if (found) return found;
  if (parent === 'name' && IGNORED_NAME_SUB_ATTRIBUTES.some((s) => s.toLowerCase() === lower)) return 'ignored';
  return undefined;
}

/** The User schema's URI, in any letter case (URNs compare so, RFC 8141 3.1, for the part that matters here). */
export function isUserSchema(uri: string): boolean {
  return uri.toLowerCase() === USER_SCHEMA.toLowerCase();
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value of `name` or of `emails` with canonical sub-attribute names; the ones not kept dropped, unknown ones `invalidSyntax`. */
export function canonicalSubAttributes(parent: 'name' | 'emails', value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const sub = subAttribute(parent, key);
    if (sub === undefined) throw new ScimInvalid('invalidSyntax', `"${parent}.${key.slice(0, 60)}" is not an attribute of the User schema`);
    if (sub !== 'ignored' && item !== null) out[sub] = item;
  }
  return out;
}

/**
 * A resource body with canonical attribute names and only what the
 * service keeps: core attributes nested under the schema's URI are lifted,
 * extension attributes (a URN the body lists in `schemas`) and ignored
 * ones dropped, read-only ones dropped (RFC 7644 3.3), null ones dropped
 * (RFC 7643 2.5); any other name is `invalidSyntax`.
 */
export function canonicalResource(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw new ScimInvalid('invalidSyntax', 'the body must be a JSON object');
  const schemas = Array.isArray(body.schemas) ? body.schemas.filter((s): s is string => typeof s === 'string') : [];
  if (!schemas.some(isUserSchema)) throw new ScimInvalid('invalidSyntax', `"schemas" must list ${USER_SCHEMA}`);
  const out: Record<string, unknown> = {};
  const take = (source: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(source)) {
      if (key.includes(':')) {
        if (isUserSchema(key) && isObject(value)) take(value);
        else if (!schemas.some((s) => s.toLowerCase() === key.toLowerCase()))
          throw new ScimInvalid('invalidSyntax', `"${key.slice(0, 100)}" is neither an attribute nor a schema the body lists in "schemas"`);
        continue;
      }
      const attribute = userAttribute(key);
      if (!attribute) throw new ScimInvalid('invalidSyntax', `"${key.slice(0, 60)}" is not an attribute of the User schema`);
      // RFC 7643 2.5: null is the same as unassigned.
      if (attribute.kind === 'ignored' || attribute.kind === 'readOnly' || value === null) continue;
      if (attribute.kind === 'name') out.name = canonicalSubAttributes('name', value);
      else if (attribute.kind === 'emails') out.emails = Array.isArray(value) ? value.map((item) => canonicalSubAttributes('emails', item)) : value;
      else out[attribute.name] = attribute.name === 'active' ? booleanOf(value) : value;
    }
  };
  take(body);
  return out;
}

/**
 * `active` as a boolean. Entra ID is documented to send "True" and
 * "False" as strings in some PATCH requests; they mean what they say.
 */
function booleanOf(value: unknown): unknown {
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return value;
}

/** The one address a user keeps: the primary email, else the one of type work, else the only one. */
function chosenEmail(emails: Array<{ value: string; type?: string; primary?: boolean }>): string {
  const primaries = emails.filter((e) => e.primary === true);
  if (primaries.length > 1) throw new ScimInvalid('invalidValue', 'at most one email may be primary');
  const chosen = primaries[0] ?? emails.find((e) => e.type?.toLowerCase() === 'work') ?? (emails.length === 1 ? emails[0] : undefined);
  if (!chosen) throw new ScimInvalid('invalidValue', 'several emails were given; mark the one to keep as primary');
  return chosen.value;
}

/** The canonical shape a schema-valid resource has (src/scim/user-schema.ts checks it before this). */
export interface ValidUserResource {
  userName: string;
  externalId?: string | null;
  name: { givenName: string; familyName: string };
  displayName?: string | null;
  nickName?: string | null;
  preferredLanguage?: string | null;
  active?: boolean;
  emails: Array<{ value: string; type?: string; primary?: boolean }>;
  password?: string;
}

/** What to store of a valid resource; `active` defaults to true (RFC 7643 4.1.1). */
export function userOfResource(resource: ValidUserResource): ScimUser {
  return {
    userName: resource.userName,
    externalId: resource.externalId ?? null,
    givenName: resource.name.givenName,
    familyName: resource.name.familyName,
    displayName: resource.displayName?.trim() ? resource.displayName : null,
    nickName: resource.nickName || null,
    preferredLanguage: resource.preferredLanguage || null,
    email: chosenEmail(resource.emails),
    active: resource.active ?? true,
  };
}

/** A stored user in canonical form, the base a PATCH works on (RFC 7644 3.5.2). */
export function resourceOfUser(user: StoredScimUser): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    name: { givenName: user.givenName, familyName: user.familyName, formatted: `${user.givenName} ${user.familyName}` },
    displayName: user.displayName,
    ...(user.nickName === null ? {} : { nickName: user.nickName }),
    ...(user.preferredLanguage === null ? {} : { preferredLanguage: user.preferredLanguage }),
    active: user.active,
    emails: [{ value: user.email, type: 'work', primary: true }],
  };
}

/** The User resource as the API answers it, with its `meta` (RFC 7643 3.1). */
export function userResponse(user: StoredScimUser, location: string): Record<string, unknown> {
  return {
    ...resourceOfUser(user),
    meta: { resourceType: 'User', created: user.created.toISOString(), lastModified: user.lastModified.toISOString(), location, version: etagOf(user.version) },
  };
}

/** Which parts of a user a change touches: each part is its own write and event, as in the management API. */
export interface UserChanges {
  userName: boolean;
  profile: boolean;
  email: boolean;
  externalId: boolean;
  active: boolean;
}

export function changesBetween(before: StoredScimUser, after: ScimUser): UserChanges {
  const displayName = after.displayName ?? `${after.givenName} ${after.familyName}`;
  return {
    userName: before.userName !== after.userName,
    profile:
      before.givenName !== after.givenName ||
      before.familyName !== after.familyName ||
      before.displayName !== displayName ||
      before.nickName !== after.nickName ||
      before.preferredLanguage !== after.preferredLanguage,
    email: before.email !== after.email,
    externalId: before.externalId !== after.externalId,
    active: before.active !== after.active,
  };
}

/**
 * Changes that act on the user's sign-in or security state (its login
 * name, email address, being active): the caller must hold every role the
 * user holds (docs/security.md, "Acting on another user").
 */
export function actsOnSecurityState(changes: UserChanges): boolean {
  return changes.userName || changes.email || changes.active;
}
