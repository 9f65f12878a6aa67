// What the server tells the page (data attributes of <body>, see
// src/http/console.ts): no inline script, so no inline configuration.

export interface ConsoleConfig {
  /** The console's own path, e.g. /ui/console. */
  base: string;
  /** The service's issuer: the addresses to give upstream providers and SAML service providers start with it. */
  issuer: string;
  clientId: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  endSessionEndpoint: string;
  /** The console's redirect URI as registered (on the issuer's origin). */
  redirectUri: string;
  postLogoutRedirectUri: string;
}

export function readConfig(body: HTMLElement): ConsoleConfig {
  const data = body.dataset;
  return {
    base: data.base ?? '/ui/console',
    issuer: data.issuer ?? location.origin,
    clientId: data.clientId ?? '',
    authorizationEndpoint: data.authorizationEndpoint ?? '',
    tokenEndpoint: data.tokenEndpoint ?? '',
    endSessionEndpoint: data.endSessionEndpoint ?? '',
    redirectUri: data.redirectUri ?? '',
    postLogoutRedirectUri: data.postLogoutRedirectUri ?? '',
  };
}
