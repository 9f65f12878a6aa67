import type { Database } from '../storage/database.ts';
import { beginWrite } from '../storage/event-log.ts';
import { findInstance } from '../storage/instance.ts';
import { addProject } from '../storage/projects.ts';
import { addApp, changeApp, findAppByClientId, settingsOf } from '../storage/apps.ts';
import { APP_DEFAULTS, appViolations, type AppSettings } from '../domain/apps.ts';
import { newId } from '../domain/ids.ts';
import { lockForTransaction } from '../storage/advisory-lock.ts';

/** The console's client id: the same on every instance, so the page needs no lookup to sign in. */
export const CONSOLE_CLIENT_ID = 'portcullis-console';
export const CONSOLE_PATH = '/ui/console';

/** Where the console receives the authorization code (RFC 6749 3.1.2). */
export function consoleRedirectUri(issuer: string): string {
  return `${issuer}${CONSOLE_PATH}/callback`;
}

/**
 * The built-in console: a public app in the browser (PKCE, RFC 7636; no
 * secret it could not keep) that may obtain the API scope, redirecting to
 * the console on this issuer. devMode only when the issuer needs it (http,
 * or a loopback host).
 */
export function consoleAppSettings(issuer: string): AppSettings {
  const settings: AppSettings = {
    ...APP_DEFAULTS,
    name: 'Console',
    redirectUris: [consoleRedirectUri(issuer)],
    postLogoutRedirectUris: [`${issuer}${CONSOLE_PATH}/`],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    appType: 'OIDC_APP_TYPE_USER_AGENT',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
    // The console shows who is signed in from its ID token's profile claims.
    idTokenUserinfoAssertion: true,
    accessTokenRoleAssertion: false,
    idTokenRoleAssertion: false,
    devMode: false,
    iamApiAccess: true,
  };
  return { ...settings, devMode: appViolations(settings).length > 0 };
}

const sameSettings = (a: AppSettings, b: AppSettings) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * Makes sure the instance has the console app, in a project "Portcullis" of
 * its first org, with the settings of `consoleAppSettings`: created on the
 * first start and on the first start of a version that brings the console,
 * and put back when its settings drifted (another ISSUER, a changed field).
 * Under an advisory lock, so nodes starting together write it once. Returns
 * what it did.
 */
export async function ensureConsoleApp(db: Database, issuer: string): Promise<'created' | 'updated' | 'unchanged'> {
  const wanted = consoleAppSettings(issuer);
  return db.transaction(async (tx) => {
    await lockForTransaction(tx, 'console_app');
    const instance = await findInstance(tx);
    if (!instance) throw new Error('the console app needs the instance; run the first start before it');
    const app = await findAppByClientId(tx, CONSOLE_CLIENT_ID);
    if (app && sameSettings(settingsOf(app), wanted)) return 'unchanged';
    const write = await beginWrite(tx, null);
    if (app) {
      await changeApp(write, { id: app.id, projectId: app.project_id, orgId: app.org_id, settings: wanted });
      return 'updated';
    }
    const projectId = newId();
    const orgId = instance.default_org_id;
    await addProject(write, { id: projectId, orgId, name: 'Portcullis' });
    await addApp(write, { id: newId(), projectId, orgId, clientId: CONSOLE_CLIENT_ID, settings: wanted, secretDigest: null });
    return 'created';
  });
}
