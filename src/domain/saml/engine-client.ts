// A SAML app signs users in through the engine's own authorization (docs/
// architecture.md, "A SAML sign-in"): the SSO endpoint sends the browser to
// /oauth/v2/authorize as an engine client of the app's own, whose only
// redirect URI is the IdP's continuation endpoint. That client is served
// from the SAML app (adapters/clients.ts); no OIDC app stands behind it.

export const SAML_PATHS = {
  metadata: '/saml/v2/metadata',
  sso: '/saml/v2/SSO',
  slo: '/saml/v2/SLO',
  /** IdP-initiated sign-in: `?sp={entityID}&RelayState=…` (docs/saml.md). */
  init: '/saml/v2/init',
  /** Where the engine sends the browser back with a code once the sign-in is done. */
  continue: '/saml/v2/continue',
} as const;

const PREFIX = 'saml:';

export function samlClientId(appId: string): string {
  return `${PREFIX}${appId}`;
}

/** The SAML app behind an engine client id, if it is one. */
export function samlAppIdOfClient(clientId: string): string | undefined {
  return clientId.startsWith(PREFIX) ? clientId.slice(PREFIX.length) : undefined;
}

export interface SamlClientSource {
  appId: string;
  projectId: string;
  orgId: string;
  name: string;
  issuer: string;
}

/**
 * The engine client of a SAML app: a public client (the code never leaves
 * the server, and its PKCE verifier is kept server side) that may only use
 * the code flow, back to the continuation endpoint.
 */
export function samlClientMetadata(source: SamlClientSource): Record<string, unknown> {
  return {
    client_id: samlClientId(source.appId),
    client_name: source.name,
    redirect_uris: [`${source.issuer}${SAML_PATHS.continue}`],
    post_logout_redirect_uris: [],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    application_type: 'web',
    token_endpoint_auth_method: 'none',
    access_token_type: 'opaque',
    id_token_userinfo_assertion: false,
    access_token_role_assertion: false,
    id_token_role_assertion: false,
    dev_mode: false,
    project_id: source.projectId,
    org_id: source.orgId,
    iam_api_access: false,
  };
}
