import type { FieldViolation } from './errors.ts';
import { LDAP_DEFAULTS, LDAP_PROPERTIES, LDAP_REQUIRED, ldapServerViolations, ldapSettingsOf, type LdapSettings } from './ldap.ts';
import { SAML_DEFAULTS, SAML_PROPERTIES, samlSettingsOf, type SamlSettings } from './saml/sp-kind.ts';

/**
 * External identity providers (docs/idps.md): the kinds an admin can
 * create, each a set of fields and the way the login reaches its upstream.
 * Every kind is OpenID Connect (discovery from an issuer, ID token checked)
 * or OAuth 2.0 with a GitHub-style user endpoint (the presets fix the
 * endpoints of well-known services), or an LDAP directory the login binds
 * to (./ldap.ts), or a SAML 2.0 IdP whose service provider we are
 * (./saml/sp-kind.ts).
 */

export interface ProviderOptions {
  isLinkingAllowed: boolean;
  isCreationAllowed: boolean;
  isAutoCreation: boolean;
  isAutoUpdate: boolean;
}

export const PROVIDER_OPTION_DEFAULTS: Readonly<ProviderOptions> = {
  isLinkingAllowed: true,
  isCreationAllowed: true,
  isAutoCreation: false,
  isAutoUpdate: false,
};

/** The fields of a kind as stored (and answered by GET): everything but the secret (an LDAP provider's `attributes` is an object of names). */
export type IdpConfig = Record<string, string | boolean | string[] | Record<string, string>>;

/** How the login reaches an upstream it sends the browser to. */
export type HttpUpstream =
  | { protocol: 'oidc'; issuer: string; clientId: string; scopes: string[]; isIdTokenMapping: boolean }
  | {
      protocol: 'oauth';
      clientId: string;
      authorizationEndpoint: string;
      tokenEndpoint: string;
      userEndpoint: string;
      scopes: string[];
      idAttribute: string;
    };

/** How the login reaches a provider's upstream: over HTTP, a directory it binds to with the typed password, or a SAML IdP. */
export type Upstream = HttpUpstream | ({ protocol: 'ldap' } & LdapSettings) | ({ protocol: 'saml' } & SamlSettings);

export interface IdpKind {
  /** Path segment of create and change: `POST /admin/v1/idps/{name}`. */
  name: string;
  /** `type` of the provider's view. */
  type: string;
  /** The write-only field sealed at rest: the client secret, or an LDAP provider's bind password; none for a kind whose secret is generated. */
  secretField?: 'clientSecret' | 'bindPassword';
  /** The secret is made at creation and kept, never given or answered: a SAML provider's own signing key. */
  generatedKey?: true;
  /** JSON Schema properties of the kind's own fields (the secret included), and which are required on create. */
  properties: Record<string, object>;
  required: string[];
  /** Defaults of optional fields. */
  defaults: IdpConfig;
  upstream(config: IdpConfig): Upstream;
  /**
   * What the secret is sent to: a change of it needs the secret again, so
   * a stored secret never reaches a server it was not given for.
   */
  secretDestination(config: IdpConfig): string;
}

const URL_FIELD = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const CLIENT_ID = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$', description: 'must be printable ASCII' } as const;
const CLIENT_SECRET = { type: 'string', minLength: 1, maxLength: 1024 } as const;
/** RFC 6749 3.3 scope-token. */
const SCOPES = {
  type: 'array',
  maxItems: 30,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$', description: 'must be a scope token (RFC 6749 3.3)' },
} as const;
const ID_ATTRIBUTE = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.-]+$',
  description: 'must be an attribute name (letters, digits, _ . -)',
} as const;
const TENANT = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9.-]*$',
  description: 'must be a tenant id or domain (letters, digits, . -)',
} as const;

const str = (config: IdpConfig, field: string): string => String(config[field] ?? '');
const list = (config: IdpConfig, field: string): string[] => (Array.isArray(config[field]) ? (config[field] as string[]) : []);
const OIDC_SCOPES = ['openid', 'profile', 'email'];

function presetOidc(name: string, type: string, issuerOf: (config: IdpConfig) => string, extra: Partial<IdpKind> = {}): IdpKind {
  return {
    name,
    type,
    secretField: 'clientSecret',
    properties: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: SCOPES },
    required: ['clientId', 'clientSecret'],
    defaults: { scopes: OIDC_SCOPES },
    upstream: (config) => ({
      protocol: 'oidc',
      issuer: issuerOf(config),
      clientId: str(config, 'clientId'),
      scopes: list(config, 'scopes'),
      isIdTokenMapping: true,
    }),
    secretDestination: issuerOf,
    ...extra,
  };
}

const GENERIC_OIDC: IdpKind = {
  name: 'generic_oidc',
  type: 'IDP_TYPE_OIDC',
  secretField: 'clientSecret',
  properties: { issuer: URL_FIELD, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: SCOPES, isIdTokenMapping: { type: 'boolean' } },
  required: ['issuer', 'clientId', 'clientSecret'],
  defaults: { scopes: OIDC_SCOPES, isIdTokenMapping: false },
  upstream: (config) => ({
    protocol: 'oidc',
    issuer: str(config, 'issuer'),
    clientId: str(config, 'clientId'),
    scopes: list(config, 'scopes'),
    isIdTokenMapping: config.isIdTokenMapping === true,
  }),
  secretDestination: (config) => str(config, 'issuer'),
};

function oauthUpstream(config: IdpConfig): HttpUpstream {
  return {
    protocol: 'oauth',
    clientId: str(config, 'clientId'),
    authorizationEndpoint: str(config, 'authorizationEndpoint'),
    tokenEndpoint: str(config, 'tokenEndpoint'),
    userEndpoint: str(config, 'userEndpoint'),
    scopes: list(config, 'scopes'),
    idAttribute: str(config, 'idAttribute'),
  };
}

const OAUTH: IdpKind = {
  name: 'oauth',
  type: 'IDP_TYPE_OAUTH',
  secretField: 'clientSecret',
  properties: {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    authorizationEndpoint: URL_FIELD,
    tokenEndpoint: URL_FIELD,
    userEndpoint: URL_FIELD,
    scopes: SCOPES,
    idAttribute: ID_ATTRIBUTE,
  },
  required: ['clientId', 'clientSecret', 'authorizationEndpoint', 'tokenEndpoint', 'userEndpoint', 'idAttribute'],
  defaults: { scopes: [] },
  upstream: oauthUpstream,
  secretDestination: (config) => str(config, 'tokenEndpoint'),
};

const GITHUB_ENDPOINTS = {
  authorizationEndpoint: 'https://github.com/login/oauth/authorize',
  tokenEndpoint: 'https://github.com/login/oauth/access_token',
  userEndpoint: 'https://api.github.com/user',
  idAttribute: 'id',
};

const GITHUB: IdpKind = {
  name: 'github',
  type: 'IDP_TYPE_GITHUB',
  secretField: 'clientSecret',
  properties: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: SCOPES },
  required: ['clientId', 'clientSecret'],
  defaults: { scopes: ['read:user', 'user:email'] },
  upstream: (config) => oauthUpstream({ ...config, ...GITHUB_ENDPOINTS }),
  secretDestination: () => GITHUB_ENDPOINTS.tokenEndpoint,
};

const LDAP: IdpKind = {
  name: 'ldap',
  type: 'IDP_TYPE_LDAP',
  secretField: 'bindPassword',
  properties: LDAP_PROPERTIES,
  required: LDAP_REQUIRED,
  defaults: LDAP_DEFAULTS,
  upstream: (config) => ({ protocol: 'ldap', ...ldapSettingsOf(config) }),
  // The bind password goes to these servers, encrypted or not as startTls says, to whoever the trusted CAs vouch for.
  secretDestination: (config) => JSON.stringify([list(config, 'servers'), config.startTls === true, config.rootCa ?? '']),
};

const SAML: IdpKind = {
  name: 'saml',
  type: 'IDP_TYPE_SAML',
  properties: SAML_PROPERTIES,
  required: [],
  defaults: SAML_DEFAULTS,
  upstream: (config) => ({ protocol: 'saml', ...samlSettingsOf(config) }),
  generatedKey: true,
  // The signing key stays ours whatever the IdP: it is never sent anywhere.
  secretDestination: () => 'saml',
};

/** Every kind that works, by its path segment. */
export const IDP_KINDS: ReadonlyMap<string, IdpKind> = new Map(
  [
    GENERIC_OIDC,
    OAUTH,
    presetOidc('google', 'IDP_TYPE_GOOGLE', () => 'https://accounts.google.com'),
    GITHUB,
    presetOidc('gitlab', 'IDP_TYPE_GITLAB', () => 'https://gitlab.com'),
    presetOidc('azure_ad', 'IDP_TYPE_AZURE_AD', (config) => `https://login.microsoftonline.com/${str(config, 'tenant')}/v2.0`, {
      properties: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: SCOPES, tenant: TENANT },
      required: ['clientId', 'clientSecret', 'tenant'],
    }),
    LDAP,
    SAML,
  ].map((kind) => [kind.name, kind]),
);

/** The kind of a stored provider's `type`. */
export function kindOfType(type: string): IdpKind | undefined {
  return [...IDP_KINDS.values()].find((kind) => kind.type === type);
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Where an upstream may be: https, or http on a loopback host (a local
 * upstream for trials and tests; RFC 8252 7.3 makes the same exception).
 * Never with credentials or a fragment.
 */
export function upstreamUrlProblem(value: string, { query }: { query: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) return 'must be an https URL (http only on a loopback host)';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash || value.includes('#')) return 'must not have a fragment';
  if (!query && url.search) return 'must not have a query';
  return undefined;
}

const URL_FIELDS: Record<string, { query: boolean }> = {
  issuer: { query: false },
  authorizationEndpoint: { query: true },
  tokenEndpoint: { query: true },
  userEndpoint: { query: true },
  metadataUrl: { query: true },
};

/** The URL fields of a body that are no usable upstream address (an LDAP provider's servers included). */
export function upstreamUrlViolations(body: Record<string, unknown>): FieldViolation[] {
  const urls = Object.entries(URL_FIELDS).flatMap(([field, rule]) => {
    const value = body[field];
    if (typeof value !== 'string' || !value) return [];
    const problem = upstreamUrlProblem(value, rule);
    return problem ? [{ field, description: problem }] : [];
  });
  return [...urls, ...ldapServerViolations(body)];
}

/** The kind's fields of a body, the secret left out and defaults filled in. */
export function configOf(kind: IdpKind, body: Record<string, unknown>): IdpConfig {
  const config: IdpConfig = { ...kind.defaults };
  for (const field of Object.keys(kind.properties)) {
    if (field !== kind.secretField && body[field] !== undefined) config[field] = body[field] as IdpConfig[string];
  }
  return config;
}
