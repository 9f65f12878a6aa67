/** The exact endpoint paths of docs/oidc.md. */
export const ROUTES = {
  authorization: '/oauth/v2/authorize',
  token: '/oauth/v2/token',
  introspection: '/oauth/v2/introspect',
  revocation: '/oauth/v2/revoke',
  jwks: '/oauth/v2/keys',
  userinfo: '/oidc/v1/userinfo',
  end_session: '/oidc/v1/end_session',
  pushed_authorization_request: '/oauth/v2/par',
  device_authorization: '/oauth/v2/device_authorization',
  // RFC 8628 3.3: the page where the user types the device's code; the
  // engine serves it (and resumes at /ui/login/device/:uid) with our pages
  // (interactions/device-pages.ts).
  code_verification: '/ui/login/device',
} as const;

/** OpenID Connect discovery, which the engine serves at its well-known path. */
export const DISCOVERY_PATH = '/.well-known/openid-configuration';

/** The engine's own sub-routes of the logout endpoint: the confirmation it posts, and the page after it. */
export const END_SESSION_PATHS = {
  end_session_confirm: `${ROUTES.end_session}/confirm`,
  end_session_success: `${ROUTES.end_session}/success`,
} as const;

/** Every exact path the engine answers (its resume paths, /…/:uid, aside). */
export const ENGINE_PATHS: readonly string[] = [...Object.values(ROUTES), DISCOVERY_PATH, ...Object.values(END_SESSION_PATHS)];

/** Where the engine sends the browser for a login page (interactions/). */
export const INTERACTION_PATH = '/ui/login';
