import type { FieldViolation } from './errors.ts';
import { addressRefusal, type AddressRefusal } from '../outbound/address-policy.ts';

export const RESPONSE_TYPES = {
  OIDC_RESPONSE_TYPE_CODE: 'code',
  OIDC_RESPONSE_TYPE_ID_TOKEN: 'id_token',
  OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN: 'id_token token',
} as const;

import { DEVICE_CODE_GRANT, TOKEN_EXCHANGE_GRANT } from './grant-types.ts';

export const GRANT_TYPES = {
  OIDC_GRANT_TYPE_AUTHORIZATION_CODE: 'authorization_code',
  OIDC_GRANT_TYPE_IMPLICIT: 'implicit',
  OIDC_GRANT_TYPE_REFRESH_TOKEN: 'refresh_token',
  OIDC_GRANT_TYPE_TOKEN_EXCHANGE: TOKEN_EXCHANGE_GRANT,
  OIDC_GRANT_TYPE_DEVICE_CODE: DEVICE_CODE_GRANT,
} as const;

export const APP_TYPES = ['OIDC_APP_TYPE_WEB', 'OIDC_APP_TYPE_USER_AGENT', 'OIDC_APP_TYPE_NATIVE'] as const;

export const AUTH_METHODS = {
  OIDC_AUTH_METHOD_TYPE_BASIC: 'client_secret_basic',
  OIDC_AUTH_METHOD_TYPE_POST: 'client_secret_post',
  OIDC_AUTH_METHOD_TYPE_NONE: 'none',
  OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT: 'private_key_jwt',
} as const;

export const ACCESS_TOKEN_TYPES = { OIDC_TOKEN_TYPE_BEARER: 'opaque', OIDC_TOKEN_TYPE_JWT: 'jwt' } as const;

export type ResponseType = keyof typeof RESPONSE_TYPES;
export type GrantType = keyof typeof GRANT_TYPES;
export type AppType = (typeof APP_TYPES)[number];
export type AuthMethod = keyof typeof AUTH_METHODS;
export type AccessTokenType = keyof typeof ACCESS_TOKEN_TYPES;

/** The settings of an OIDC app, as the API names them. */
export interface AppSettings {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  responseTypes: ResponseType[];
  grantTypes: GrantType[];
  appType: AppType;
  authMethodType: AuthMethod;
  accessTokenType: AccessTokenType;
  idTokenUserinfoAssertion: boolean;
  accessTokenRoleAssertion: boolean;
  idTokenRoleAssertion: boolean;
  devMode: boolean;
  /** May obtain tokens for this service's admin and management API (docs/security.md). */
  iamApiAccess: boolean;
  /** Authorization requests only through the PAR endpoint (RFC 9126 6). */
  requirePushedAuthorizationRequests: boolean;
  /** Every access token bound to a DPoP key: a token request without a proof is refused (RFC 9449 5). */
  dpopBoundAccessTokens: boolean;
  /** Where logout tokens are POSTed (OIDC Back-Channel Logout 1.0); empty: none. */
  backChannelLogoutUri: string;
  /** Logout tokens carry the session's `sid` (Back-Channel Logout 2.4: backchannel_logout_session_required). */
  backChannelLogoutSessionRequired: boolean;
}

export const APP_DEFAULTS: Omit<AppSettings, 'name'> = {
  redirectUris: [],
  postLogoutRedirectUris: [],
  responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
  grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
  appType: 'OIDC_APP_TYPE_WEB',
  authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
  idTokenUserinfoAssertion: false,
  accessTokenRoleAssertion: false,
  idTokenRoleAssertion: false,
  devMode: false,
  iamApiAccess: false,
  requirePushedAuthorizationRequests: false,
  dpopBoundAccessTokens: false,
  backChannelLogoutUri: '',
  backChannelLogoutSessionRequired: false,
};

/** localhost and its subdomains, 127.0.0.0/8, ::1 and 0.0.0.0, with or without a trailing dot. */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]' || host === '0.0.0.0';
}
// Schemes that could run code or read local data in the browser.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:']);

/**
 * docs/api/projects-apps.md: absolute https URIs without fragment; http and
 * localhost only in dev mode or for native apps; custom schemes (and http
 * on loopback) for native apps.
 */
function redirectUriProblem(uri: string, appType: AppType, devMode: boolean): string | undefined {
  const url = URL.parse(uri);
  if (!url || !/^[a-z][a-z0-9+.-]*:/i.test(uri)) return 'must be an absolute URI';
  const web = url.protocol === 'https:' || url.protocol === 'http:';
  if (web && (!/^https?:\/\/[^/?#]/i.test(uri) || !url.hostname)) return 'must name a host (scheme://host/path)';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`;
  if (appType === 'OIDC_APP_TYPE_NATIVE') {
    // RFC 8252: loopback redirects use http; claimed https URIs use a real host.
    if (url.protocol === 'http:' && !isLoopback(url.hostname)) return 'of a native app may use http only on a loopback address';
    if (url.protocol === 'https:' && isLoopback(url.hostname)) return 'of a native app must use http for loopback addresses';
    return undefined;
  }
  if (!web) return 'must use https (custom schemes are for native apps)';
  if (devMode) return undefined;
  if (url.protocol === 'http:') return 'must use https (http only with devMode)';
  if (isLoopback(url.hostname)) return 'must not point to localhost (only with devMode)';
  return undefined;
}

/** What the outbound client says to the address a URL's host names literally (IPv6 without brackets); a name is judged when resolved. */
function literalRefusal(hostname: string, privateAllowed: boolean): AddressRefusal | undefined {
  const refusal = addressRefusal(hostname.startsWith('[') ? hostname.slice(1, -1) : hostname, privateAllowed);
  return refusal === 'not an IP address' ? undefined : refusal;
}

/** Loopback names, names of local networks, and literal addresses the outbound client counts as loopback or private. */
function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return isLoopback(host) || host.endsWith('.local') || host.endsWith('.internal') || literalRefusal(host, false) !== undefined;
}

/**
 * OIDC Back-Channel Logout 2.2: an absolute URI without fragment. The
 * outbound client checks every address the host resolves to at each
 * delivery (docs/security.md); here only what the URI itself shows: https
 * on a public host, and in dev mode also http and loopback or private
 * hosts, which are then reached only when the instance runs with
 * OUTBOUND_ALLOW_PRIVATE. A link-local or metadata address is never
 * reached, so it is refused for every app.
 */
function backChannelLogoutUriProblem(uri: string, devMode: boolean): string | undefined {
  const url = URL.parse(uri);
  if (!url || !/^https?:\/\/[^/?#]/i.test(uri) || !url.hostname) return 'must be an absolute http(s) URI with a host';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (literalRefusal(url.hostname, true)) return 'must not point to a link-local, metadata or multicast address';
  if (devMode) return undefined;
  if (url.protocol !== 'https:') return 'must use https (http only with devMode)';
  if (isPrivateHost(url.hostname)) return 'must point to a public address (loopback and private addresses only with devMode)';
  return undefined;
}

/** Every rule of an app's settings that a schema cannot express, as field violations. */
export function appViolations(app: AppSettings): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const responses = new Set(app.responseTypes);
  const grants = new Set(app.grantTypes);
  const implicitResponse = responses.has('OIDC_RESPONSE_TYPE_ID_TOKEN') || responses.has('OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN');
  const browserFlow = grants.has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE') || grants.has('OIDC_GRANT_TYPE_IMPLICIT');

  if (responses.has('OIDC_RESPONSE_TYPE_CODE') && !grants.has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE')) {
    violations.push({ field: 'grantTypes', description: 'response type CODE needs the AUTHORIZATION_CODE grant' });
  } else if (implicitResponse && !grants.has('OIDC_GRANT_TYPE_IMPLICIT')) {
    violations.push({ field: 'grantTypes', description: 'response types ID_TOKEN and ID_TOKEN_TOKEN need the IMPLICIT grant' });
  } else if (grants.has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE') && !responses.has('OIDC_RESPONSE_TYPE_CODE')) {
    violations.push({ field: 'responseTypes', description: 'the AUTHORIZATION_CODE grant needs response type CODE' });
  } else if (grants.has('OIDC_GRANT_TYPE_IMPLICIT') && !implicitResponse) {
    violations.push({ field: 'responseTypes', description: 'the IMPLICIT grant needs response type ID_TOKEN or ID_TOKEN_TOKEN' });
  } else if (grants.has('OIDC_GRANT_TYPE_REFRESH_TOKEN') && !grants.has('OIDC_GRANT_TYPE_AUTHORIZATION_CODE') && !grants.has('OIDC_GRANT_TYPE_DEVICE_CODE')) {
    violations.push({ field: 'grantTypes', description: 'the REFRESH_TOKEN grant needs the AUTHORIZATION_CODE or DEVICE_CODE grant' });
  }

  if (app.appType !== 'OIDC_APP_TYPE_WEB' && app.authMethodType !== 'OIDC_AUTH_METHOD_TYPE_NONE') {
    violations.push({ field: 'authMethodType', description: 'user agent and native apps cannot keep a secret: use OIDC_AUTH_METHOD_TYPE_NONE' });
  }
  if (app.requirePushedAuthorizationRequests && !browserFlow) {
    violations.push({
      field: 'requirePushedAuthorizationRequests',
      description: 'needs the AUTHORIZATION_CODE or IMPLICIT grant: it governs authorization requests',
    });
  }
  if (browserFlow && app.redirectUris.length === 0) {
    violations.push({ field: 'redirectUris', description: 'at least one redirect URI is needed for the authorization code and implicit grants' });
  }
  const check = (uris: string[], field: string) =>
    uris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri, app.appType, app.devMode);
      if (problem) violations.push({ field: `${field}[${i}]`, description: problem });
    });
  check(app.redirectUris, 'redirectUris');
  check(app.postLogoutRedirectUris, 'postLogoutRedirectUris');
  const logoutProblem = app.backChannelLogoutUri ? backChannelLogoutUriProblem(app.backChannelLogoutUri, app.devMode) : undefined;
  if (logoutProblem) violations.push({ field: 'backChannelLogoutUri', description: logoutProblem });
  if (app.backChannelLogoutSessionRequired && !app.backChannelLogoutUri) {
    violations.push({ field: 'backChannelLogoutSessionRequired', description: 'needs a backChannelLogoutUri' });
  }
  return violations;
}

export function needsSecret(authMethod: AuthMethod): boolean {
  return authMethod === 'OIDC_AUTH_METHOD_TYPE_BASIC' || authMethod === 'OIDC_AUTH_METHOD_TYPE_POST';
}

/** Client metadata properties of our own, beside the standard ones. */
export const EXTRA_CLIENT_METADATA = [
  'access_token_type',
  'id_token_userinfo_assertion',
  'access_token_role_assertion',
  'id_token_role_assertion',
  'dev_mode',
  'project_id',
  'org_id',
  'machine_user_id',
  'iam_api_access',
] as const;

export interface ClientSource {
  clientId: string;
  projectId: string;
  orgId: string;
  settings: AppSettings;
  /** Keyed digest of the client secret, base64url; the engine's comparison is replaced to match it. */
  secretDigest: string | null;
  publicKeys: object[];
  /** The app's iamApiAccess, counted only for apps of the instance's first org. */
  apiAccess: boolean;
}

/** The engine's client metadata for an app. */
export function toClientMetadata(source: ClientSource): Record<string, unknown> {
  const { settings } = source;
  const metadata: Record<string, unknown> = {
    client_id: source.clientId,
    client_name: settings.name,
    redirect_uris: settings.redirectUris,
    post_logout_redirect_uris: settings.postLogoutRedirectUris,
    response_types: settings.responseTypes.map((type) => RESPONSE_TYPES[type]),
    grant_types: settings.grantTypes.map((type) => GRANT_TYPES[type]),
    application_type: settings.appType === 'OIDC_APP_TYPE_NATIVE' ? 'native' : 'web',
    token_endpoint_auth_method: AUTH_METHODS[settings.authMethodType],
    access_token_type: ACCESS_TOKEN_TYPES[settings.accessTokenType],
    id_token_userinfo_assertion: settings.idTokenUserinfoAssertion,
    access_token_role_assertion: settings.accessTokenRoleAssertion,
    id_token_role_assertion: settings.idTokenRoleAssertion,
    dev_mode: settings.devMode,
    project_id: source.projectId,
    org_id: source.orgId,
    iam_api_access: source.apiAccess,
    require_pushed_authorization_requests: settings.requirePushedAuthorizationRequests,
    dpop_bound_access_tokens: settings.dpopBoundAccessTokens,
  };
  if (settings.backChannelLogoutUri) {
    metadata.backchannel_logout_uri = settings.backChannelLogoutUri;
    metadata.backchannel_logout_session_required = settings.backChannelLogoutSessionRequired;
  }
  if (needsSecret(settings.authMethodType) && source.secretDigest) metadata.client_secret = source.secretDigest;
  if (settings.authMethodType === 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT') metadata.jwks = { keys: source.publicKeys };
  return metadata;
}
