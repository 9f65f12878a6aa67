import assert from 'node:assert/strict';
import { request, type Api, type ApiResponse } from './api.ts';
import type { TokenWorld } from './tokens.ts';

// The login UI's forms without a browser: an authorization request starts
// an interaction, and its forms are posted as a browser would, with the
// interaction cookies and the form's CSRF token.

export const LOGIN_FORM_REDIRECT = 'http://localhost:1/cb';

/** The settings of a confidential web app (code flow, devMode) redirecting to LOGIN_FORM_REDIRECT. */
const LOGIN_FORM_APP = {
  redirectUris: [LOGIN_FORM_REDIRECT],
  responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
  grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
  appType: 'OIDC_APP_TYPE_WEB',
  authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  devMode: true,
};

/** A project and a LOGIN_FORM_APP app. */
export async function loginFormApp(world: TokenWorld, name: string): Promise<{ clientId: string; clientSecret: string }> {
  const app = await world.createApp(await world.createProject(name), LOGIN_FORM_APP);
  return { clientId: app.clientId, clientSecret: app.clientSecret! };
}

/** The first page of an interaction: where its forms post, its cookies and CSRF token. */
export interface InteractionPage {
  action: string;
  cookie: string;
  csrf: string;
}

/** Starts a code flow of `clientId` (`params` added to the request) and opens the page the engine sends the browser to. */
export async function interactionPage(
  baseUrl: string,
  clientId: string,
  params: Record<string, string> = {},
  redirectUri = LOGIN_FORM_REDIRECT,
): Promise<InteractionPage> {
  const query = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    code_challenge: 'x'.repeat(43),
    code_challenge_method: 'S256',
    ...params,
  };
  const authorize = await request(`${baseUrl}/oauth/v2/authorize?${new URLSearchParams(query)}`);
  assert.equal(authorize.status, 303, authorize.text);
  const location = new URL(authorize.headers.get('location')!, baseUrl).pathname;
  const cookie = authorize.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const page = await request(`${baseUrl}${location}`, { headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  assert.ok(csrf, page.text.slice(0, 300));
  return { action: `${baseUrl}${location}`, cookie, csrf };
}

/** Posts a step's form (`/{action}/{step}`) of the interaction, with its CSRF token. */
export function postStep(page: InteractionPage, step: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return request(`${page.action}/${step}`, {
    method: 'POST',
    headers: { ...headers, cookie: page.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: page.csrf, ...fields }),
  });
}

export type PasswordForm = (loginName: string, password: string) => Promise<ApiResponse>;

/** Starts a code flow of `clientId` (by default to http://localhost:1/cb, registered in devMode) and returns its password form. */
export async function passwordForm(
  baseUrl: string,
  clientId: string,
  headers: Record<string, string> = {},
  redirectUri = LOGIN_FORM_REDIRECT,
): Promise<PasswordForm> {
  const page = await interactionPage(baseUrl, clientId, {}, redirectUri);
  return (loginName, password) => postStep(page, 'password', { loginName, password }, headers);
}

/**
 * A project with a confidential web app whose one redirect URI is
 * passwordForm's default (devMode, so http and localhost are allowed);
 * answers the app's client id.
 */
export async function passwordFormApp(api: Api, name: string, orgId?: string): Promise<string> {
  return (await passwordFormAppWithSecret(api, name, orgId)).clientId;
}

/** passwordFormApp's app with its client secret (shown once), for the token endpoint and introspection. */
export async function passwordFormAppWithSecret(api: Api, name: string, orgId?: string): Promise<{ clientId: string; clientSecret: string }> {
  const project = await api('POST', '/management/v1/projects', { body: { name }, orgId });
  assert.equal(project.status, 200, project.text);
  const app = await api('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
    body: { name: `${name} app`, ...LOGIN_FORM_APP },
    orgId,
  });
  assert.equal(app.status, 200, app.text);
  return { clientId: app.body.clientId, clientSecret: app.body.clientSecret };
}
