import { MAX_PASSWORD_LENGTH } from '../domain/password-policy.ts';

// The JSON Schema of a User resource after its names are made canonical
// (src/domain/scim/user.ts, canonicalResource): the limits of a human
// user of the management API (docs/api/users.md), in SCIM's shape.

const required200 = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'must not be blank' };
const optional200 = { type: 'string', maxLength: 200 };

export const userResourceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userName', 'name', 'emails'],
  properties: {
    userName: { ...required200, pattern: '^\\S+$', description: 'must not contain whitespace' },
    externalId: { type: 'string', minLength: 1, maxLength: 200 },
    name: {
      type: 'object',
      additionalProperties: false,
      required: ['givenName', 'familyName'],
      properties: { givenName: required200, familyName: required200 },
    },
    displayName: optional200,
    nickName: optional200,
    preferredLanguage: {
      type: 'string',
      maxLength: 10,
      pattern: '^$|^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$',
      description: 'must be a language tag (RFC 5646) such as en or de-CH',
    },
    active: { type: 'boolean' },
    emails: {
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['value'],
        properties: {
          value: { type: 'string', minLength: 1, maxLength: 254, format: 'email', description: 'must be an email address such as alice@example.com' },
          type: { type: 'string', maxLength: 50 },
          primary: { type: 'boolean' },
          display: { type: 'string', maxLength: 254 },
        },
      },
    },
    password: { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_LENGTH },
  },
} as const;
