import { ACCESS_TOKEN_TYPES, APP_TYPES, AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES } from '../domain/apps.ts';

const uriList = { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 2000 } };
const enumList = (values: string[], minItems = 1) => ({
  type: 'array',
  minItems,
  maxItems: values.length,
  uniqueItems: true,
  items: { type: 'string', enum: values },
});

const appProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  redirectUris: uriList,
  postLogoutRedirectUris: uriList,
  // Empty for an app without browser sign-in (a device app, RFC 8628).
  responseTypes: enumList(Object.keys(RESPONSE_TYPES), 0),
  grantTypes: enumList(Object.keys(GRANT_TYPES)),
  appType: { type: 'string', enum: [...APP_TYPES] },
  authMethodType: { type: 'string', enum: Object.keys(AUTH_METHODS) },
  accessTokenType: { type: 'string', enum: Object.keys(ACCESS_TOKEN_TYPES) },
  idTokenUserinfoAssertion: { type: 'boolean' },
  accessTokenRoleAssertion: { type: 'boolean' },
  idTokenRoleAssertion: { type: 'boolean' },
  devMode: { type: 'boolean' },
  iamApiAccess: { type: 'boolean' },
  requirePushedAuthorizationRequests: { type: 'boolean' },
  dpopBoundAccessTokens: { type: 'boolean' },
  backChannelLogoutUri: { type: 'string', maxLength: 2000 },
  backChannelLogoutSessionRequired: { type: 'boolean' },
};

export const createAppSchema = { type: 'object', additionalProperties: false, required: ['name'], properties: appProperties };
export const changeAppSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: appProperties };

export const projectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
};

export const projectRoleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['roleKey'],
  properties: {
    roleKey: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\s\\p{Cc}]+$', description: 'must not contain white space or control characters' },
    displayName: { type: 'string', maxLength: 200 },
  },
};

export const projectRoleChangeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['displayName'],
  properties: { displayName: { type: 'string', minLength: 1, maxLength: 200 } },
};

export const appKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['KEY_TYPE_JSON'] },
    expirationDate: { type: 'string', format: 'date-time', description: 'must be an ISO 8601 date-time such as 2030-01-01T00:00:00Z' },
  },
};

/** A SAML app (docs/api/saml-apps.md): its SP metadata as a document (base64) or a URL; exactly one of them, checked by the command. */
export const createSamlAppSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    // 512 KiB of XML as base64.
    metadataXml: { type: 'string', minLength: 1, maxLength: 700_000 },
    metadataUrl: { type: 'string', minLength: 1, maxLength: 2000 },
    allowIdpInitiated: { type: 'boolean' },
  },
};

/** The settings of a SAML app that change in place; its metadata does not (remove and add it again). */
export const changeSamlAppSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['allowIdpInitiated'],
  properties: { allowIdpInitiated: { type: 'boolean' } },
};
