import { LIST_RESPONSE_SCHEMA, USER_SCHEMA } from '../domain/scim/user.ts';
import { MAX_BODY_BYTES } from '../admin/json-body.ts';

// What a SCIM client reads to learn what this service offers (RFC 7644 4,
// RFC 7643 5–7): one resource type (User; Groups are not offered), PATCH,
// filters and sorting, ETags, bulk, no password change.

/** Most resources one list page holds (RFC 7644 3.4.2.4 `count`), and the page when `count` is not given. */
export const MAX_RESULTS = 200;
export const DEFAULT_COUNT = 100;
/** Operations in one bulk request (RFC 7644 3.7); its payload limit is the body's 1 MiB. */
export const MAX_BULK_OPERATIONS = 100;

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SPC_SCHEMA],
    patch: { supported: true },
    bulk: { supported: true, maxOperations: MAX_BULK_OPERATIONS, maxPayloadSize: MAX_BODY_BYTES },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description:
          'A personal access token or an access token with the urn:service:iam:api scope of a user holding ORG_OWNER or ORG_USER_MANAGER in this org',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function userResourceType(base: string) {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A human user of the organization',
    schema: USER_SCHEMA,
    schemaExtensions: [],
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  };
}

interface AttributeOptions {
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'writeOnly';
  returned?: 'always' | 'default' | 'never';
  uniqueness?: 'none' | 'server';
  multiValued?: boolean;
  subAttributes?: object[];
}

function attribute(name: string, type: string, description: string, options: AttributeOptions = {}) {
  return {
    name,
    type,
    multiValued: options.multiValued ?? false,
    description,
    required: options.required ?? false,
    caseExact: options.caseExact ?? false,
    mutability: options.mutability ?? 'readWrite',
    returned: options.returned ?? 'default',
    uniqueness: options.uniqueness ?? 'none',
    ...(options.subAttributes ? { subAttributes: options.subAttributes } : {}),
  };
}

/** The User schema as this service keeps it: only the attributes it stores (RFC 7643 7). */
export function userSchema(base: string) {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: USER_SCHEMA,
    name: 'User',
    description: 'User Account',
    attributes: [
      attribute('userName', 'string', 'Unique identifier of the user in the organization; the login name is userName@primary domain', {
        required: true,
        uniqueness: 'server',
      }),
      attribute('name', 'complex', "The user's name", {
        required: true,
        subAttributes: [
          attribute('givenName', 'string', 'Given name (first name)', { required: true }),
          attribute('familyName', 'string', 'Family name (last name)', { required: true }),
          attribute('formatted', 'string', 'givenName familyName', { mutability: 'readOnly' }),
        ],
      }),
      attribute('displayName', 'string', 'Name shown to others; defaults to givenName familyName'),
      attribute('nickName', 'string', 'Casual name'),
      attribute('preferredLanguage', 'string', 'Preferred language (RFC 5646 tag)'),
      attribute('active', 'boolean', 'false: deactivated, no sign-in, tokens end; true: active again'),
      attribute('password', 'string', 'Initial password; accepted when the user is created', { mutability: 'writeOnly', returned: 'never', caseExact: true }),
      attribute('emails', 'complex', 'The one email address kept: the primary one', {
        required: true,
        multiValued: true,
        subAttributes: [
          attribute('value', 'string', 'Email address'),
          attribute('type', 'string', 'Always work'),
          attribute('primary', 'boolean', 'Always true'),
        ],
      }),
      attribute('externalId', 'string', "The provisioning client's identifier of the user", { caseExact: true, uniqueness: 'server' }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
  };
}

/** A ListResponse (RFC 7644 3.4.2) of resources that need no paging. */
export function listOf(resources: object[]) {
  return { schemas: [LIST_RESPONSE_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}
