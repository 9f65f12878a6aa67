import { GENDERS } from '../domain/users.ts';
import { MAX_PASSWORD_LENGTH } from '../domain/password-policy.ts';
import { ORG_ROLES } from '../domain/roles.ts';

// JSON Schemas of the request bodies: the limits of docs/api/orgs.md and
// docs/api/users.md. Each
// `description` is the message a caller sees when a pattern or format fails.

const required200 = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'must not be blank' };
const optional200 = { type: 'string', maxLength: 200 };

const DOMAIN = '^$|^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?$';
// RFC 3966 global-number-digits: "+" *phonedigit DIGIT *phonedigit, where
// a phonedigit is a digit or one of the visual separators - . ( ).
const GLOBAL_PHONE = '^\\+[0-9().-]*[0-9][0-9().-]*$';
// RFC 3066 language tag: a primary subtag of 1-8 letters, then subtags of 1-8 letters or digits.
const LANGUAGE_TAG = '^$|^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$';

export const humanSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['userName', 'profile', 'email'],
  properties: {
    userName: { ...required200, pattern: '^\\S+$', description: 'must not contain whitespace' },
    profile: {
      type: 'object',
      additionalProperties: false,
      required: ['firstName', 'lastName'],
      properties: {
        firstName: required200,
        lastName: required200,
        nickName: optional200,
        displayName: optional200,
        preferredLanguage: { type: 'string', maxLength: 10, pattern: LANGUAGE_TAG, description: 'must be a language tag (RFC 3066) such as en or de-CH' },
        gender: { type: 'string', enum: [...GENDERS] },
      },
    },
    email: {
      type: 'object',
      additionalProperties: false,
      required: ['email'],
      properties: {
        email: {
          type: 'string',
          minLength: 1,
          maxLength: 254,
          format: 'email',
          description: 'must be an email address (RFC 2822 addr-spec) such as alice@example.com',
        },
        isEmailVerified: { type: 'boolean' },
      },
    },
    phone: {
      type: 'object',
      additionalProperties: false,
      required: ['phone'],
      properties: {
        phone: {
          type: 'string',
          minLength: 1,
          maxLength: 50,
          pattern: GLOBAL_PHONE,
          description: 'must be a global phone number (RFC 3966) such as +41791234567',
        },
        isPhoneVerified: { type: 'boolean' },
      },
    },
    password: { type: 'string', maxLength: MAX_PASSWORD_LENGTH },
  },
} as const;

export const setupOrgSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['org', 'human'],
  properties: {
    org: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: required200,
        domain: { type: 'string', maxLength: 200, pattern: DOMAIN, description: 'must be a domain name such as acme.example.com' },
      },
    },
    human: humanSchema,
    roles: { type: 'array', maxItems: 20, items: { type: 'string', enum: [...ORG_ROLES] } },
  },
} as const;

/** The body of an org's creation and rename. */
export const orgNameSchema = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: required200 } } as const;
