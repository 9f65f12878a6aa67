import { MACHINE_ACCESS_TOKEN_TYPES } from '../domain/users.ts';
import { INSTANCE_ROLES, ORG_ROLES } from '../domain/roles.ts';
import type { FieldViolation } from '../domain/errors.ts';
import { humanSchema } from './schemas.ts';

// JSON Schemas of the user, member and feature calls (docs/api/users.md,
// docs/api/features.md). As in
// schemas.ts, each `description` is what a caller reads when a pattern or
// format fails. A date in the future is an extra rule of the validator (see
// `futureDate`); what needs the database or a key parser (role keys of a
// project, a readable public key) is checked by the commands.

const ID = { type: 'string', minLength: 1, maxLength: 64 };
const EXPIRATION_DATE = { type: 'string', maxLength: 64, format: 'date-time', description: 'must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' };

/** The validator's extra rule for an optional `expirationDate`: it must lie in the future. */
export function futureDate(field: string) {
  return (value: unknown, now = Date.now()): FieldViolation[] => {
    const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    return !Number.isNaN(at) && at <= now ? [{ field, description: 'must be in the future' }] : [];
  };
}

export const machineSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userName', 'name'],
  properties: {
    userName: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\S+$', description: 'must not contain whitespace' },
    name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'must not be blank' },
    description: { type: 'string', maxLength: 500 },
    accessTokenType: { type: 'string', enum: [...MACHINE_ACCESS_TOKEN_TYPES] },
  },
} as const;

export const machineKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['KEY_TYPE_JSON'] },
    expirationDate: EXPIRATION_DATE,
    publicKey: { type: 'string', minLength: 1, maxLength: 16384, pattern: '^[A-Za-z0-9+/=\\r\\n]+$', description: 'must be the base64 of a PEM public key' },
  },
} as const;

/** `PUT .../secret` takes no fields: no body or `{}`. */
export const emptySchema = { type: 'object', additionalProperties: false, properties: {} } as const;

export const patSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { expirationDate: EXPIRATION_DATE },
} as const;

export const userGrantSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'roleKeys'],
  properties: {
    projectId: ID,
    roleKeys: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 200 } },
  },
} as const;

/** `PUT .../users/{id}/profile`: the create call's profile, with its limits. */
export const profileSchema = humanSchema.properties.profile;

/** `PUT .../users/{id}/phone`: the create call's phone, with its limits. */
export const phoneSchema = humanSchema.properties.phone;

export const userNameSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userName'],
  properties: { userName: humanSchema.properties.userName },
} as const;

export const userGrantChangeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['roleKeys'],
  properties: { roleKeys: userGrantSchema.properties.roleKeys },
} as const;

function memberSchema(roles: readonly string[]) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['userId', 'roles'],
    properties: {
      userId: ID,
      roles: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', enum: [...roles] }, description: `must list 1 to 20 of ${roles.join(', ')}` },
    },
  } as const;
}

function memberRolesSchema(roles: readonly string[]) {
  const { roles: rolesRule } = memberSchema(roles).properties;
  return { type: 'object', additionalProperties: false, required: ['roles'], properties: { roles: rolesRule } } as const;
}

export const orgMemberSchema = memberSchema(ORG_ROLES);
export const orgMemberRolesSchema = memberRolesSchema(ORG_ROLES);
export const instanceMemberRolesSchema = memberRolesSchema(INSTANCE_ROLES);
export const instanceMemberSchema = memberSchema(INSTANCE_ROLES);

export const instanceFeaturesSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { oidcTokenExchange: { type: 'boolean' } },
} as const;
