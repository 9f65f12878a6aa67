import assert from 'node:assert/strict';
import { request, type Api, type ApiResponse } from './api.ts';

// The login UI's password form without a browser: an authorization request
// starts an interaction, and its password form is posted as a browser
// would, with the interaction cookies and the form's CSRF token.

export type PasswordForm = (loginName: string, password: string) => Promise<ApiResponse>;

/** Starts a code flow of `clientId` (by default to http://localhost:1/cb, registered in devMode) and returns its password form. */
export async function passwordForm(
  baseUrl: string,
  clientId: string,
  headers: Record<string, string> = {},
  redirectUri = 'http://localhost:1/cb',
): Promise<PasswordForm> {
  const params = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    code_challenge: 'x'.repeat(43),
    code_challenge_method: 'S256',
  };
  const authorize = await request(`${baseUrl}/oauth/v2/authorize?${new URLSearchParams(params)}`);
  assert.equal(authorize.status, 303, authorize.text);
  const location = new URL(authorize.headers.get('location')!, baseUrl).pathname;
  const cookie = authorize.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const page = await request(`${baseUrl}${location}`, { headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  assert.ok(csrf, page.text.slice(0, 300));
  return (loginName, password) =>
    request(`${baseUrl}${location}/password`, {
      method: 'POST',
      headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, loginName, password }),
    });
}

/**
 * A project with a confidential web app whose one redirect URI is
 * passwordForm's default (devMode, so http and localhost are allowed);
 * answers the app's client id.
 */
export async function passwordFormApp(api: Api, name: string, orgId?: string): Promise<string> {
  const project = await api('POST', '/management/v1/projects', { body: { name }, orgId });
  assert.equal(project.status, 200, project.text);
  const app = await api('POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
    body: {
      name: `${name} app`,
      redirectUris: ['http://localhost:1/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      devMode: true,
    },
    orgId,
  });
  assert.equal(app.status, 200, app.text);
  return app.body.clientId;
}
