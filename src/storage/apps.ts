import type { Queryable } from './database.ts';
import type { Write } from './event-log.ts';
import type { AppSettings } from '../domain/apps.ts';

export interface AppRow {
  id: string;
  project_id: string;
  org_id: string;
  client_id: string;
  name: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  response_types: string[];
  grant_types: string[];
  app_type: string;
  auth_method: string;
  access_token_type: string;
  id_token_userinfo_assertion: boolean;
  access_token_role_assertion: boolean;
  id_token_role_assertion: boolean;
  dev_mode: boolean;
  iam_api_access: boolean;
  require_par: boolean;
  dpop_bound: boolean;
  backchannel_logout_uri: string | null;
  backchannel_logout_session_required: boolean;
  secret_digest: Uint8Array | null;
  sequence: string;
  creation_date: Date;
  change_date: Date;
}

export function settingsOf(row: AppRow): AppSettings {
  return {
    name: row.name,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    responseTypes: row.response_types as AppSettings['responseTypes'],
    grantTypes: row.grant_types as AppSettings['grantTypes'],
    appType: row.app_type as AppSettings['appType'],
    authMethodType: row.auth_method as AppSettings['authMethodType'],
    accessTokenType: row.access_token_type as AppSettings['accessTokenType'],
    idTokenUserinfoAssertion: row.id_token_userinfo_assertion,
    accessTokenRoleAssertion: row.access_token_role_assertion,
    idTokenRoleAssertion: row.id_token_role_assertion,
    devMode: row.dev_mode,
    iamApiAccess: row.iam_api_access,
    requirePushedAuthorizationRequests: row.require_par,
    dpopBoundAccessTokens: row.dpop_bound,
    backChannelLogoutUri: row.backchannel_logout_uri ?? '',
    backChannelLogoutSessionRequired: row.backchannel_logout_session_required,
  };
}

// The event payload of an app: its settings, never its secret.
function settingsPayload(settings: AppSettings): Record<string, unknown> {
  return { ...settings };
}

/** Each setting's column and value, in one order for every statement. */
const SETTINGS_COLUMNS: [column: string, value: (s: AppSettings) => unknown][] = [
  ['name', (s) => s.name],
  ['redirect_uris', (s) => s.redirectUris],
  ['post_logout_redirect_uris', (s) => s.postLogoutRedirectUris],
  ['response_types', (s) => s.responseTypes],
  ['grant_types', (s) => s.grantTypes],
  ['app_type', (s) => s.appType],
  ['auth_method', (s) => s.authMethodType],
  ['access_token_type', (s) => s.accessTokenType],
  ['id_token_userinfo_assertion', (s) => s.idTokenUserinfoAssertion],
  ['access_token_role_assertion', (s) => s.accessTokenRoleAssertion],
  ['id_token_role_assertion', (s) => s.idTokenRoleAssertion],
  ['dev_mode', (s) => s.devMode],
  ['iam_api_access', (s) => s.iamApiAccess],
  ['require_par', (s) => s.requirePushedAuthorizationRequests],
  ['dpop_bound', (s) => s.dpopBoundAccessTokens],
  ['backchannel_logout_uri', (s) => s.backChannelLogoutUri || null],
  ['backchannel_logout_session_required', (s) => s.backChannelLogoutSessionRequired],
];
const SETTINGS_PARAMS = (s: AppSettings) => SETTINGS_COLUMNS.map(([, value]) => value(s));
const SETTINGS_COUNT = SETTINGS_COLUMNS.length;
/** `$1, $2, …` for the settings, then `$n` for what follows them. */
const param = (i: number) => `$${SETTINGS_COUNT + i}`;

export async function addApp(
  write: Write,
  app: { id: string; projectId: string; orgId: string; clientId: string; settings: AppSettings; secretDigest: Buffer | null },
): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.added',
    resourceOwner: app.orgId,
    payload: { appId: app.id, clientId: app.clientId, ...settingsPayload(app.settings) },
  });
  const settings = SETTINGS_COLUMNS.map(([column]) => column).join(', ');
  const values = SETTINGS_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  await write.tx.query(
    `INSERT INTO apps (${settings}, id, project_id, org_id, client_id, secret_digest, sequence, creation_date, change_date)
     VALUES (${values}, ${param(1)}, ${param(2)}, ${param(3)}, ${param(4)}, ${param(5)}, ${param(6)}, ${param(7)}, ${param(7)})`,
    [...SETTINGS_PARAMS(app.settings), app.id, app.projectId, app.orgId, app.clientId, app.secretDigest, sequence, write.at],
  );
}

/** Replaces an app's settings; `secretDigest` undefined keeps the current secret. */
export async function changeApp(
  write: Write,
  app: { id: string; projectId: string; orgId: string; settings: AppSettings; secretDigest?: Buffer | null },
): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.changed',
    resourceOwner: app.orgId,
    payload: { appId: app.id, ...settingsPayload(app.settings), secretChanged: app.secretDigest !== undefined },
  });
  const assignments = SETTINGS_COLUMNS.map(([column], i) => `${column} = $${i + 1}`).join(', ');
  await write.tx.query(
    `UPDATE apps SET ${assignments}, sequence = ${param(2)}, change_date = ${param(3)},
                     secret_digest = CASE WHEN ${param(4)} THEN ${param(5)}::bytea ELSE secret_digest END
      WHERE id = ${param(1)}`,
    [...SETTINGS_PARAMS(app.settings), app.id, sequence, write.at, app.secretDigest !== undefined, app.secretDigest ?? null],
  );
}

export async function removeApp(write: Write, app: { id: string; projectId: string; orgId: string }): Promise<void> {
  await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.removed',
    resourceOwner: app.orgId,
    payload: { appId: app.id },
  });
  await write.tx.query('DELETE FROM apps WHERE id = $1', [app.id]);
}

const APP_COLUMNS = `id, project_id, org_id, client_id, name, redirect_uris, post_logout_redirect_uris, response_types, grant_types, app_type,
  auth_method, access_token_type, id_token_userinfo_assertion, access_token_role_assertion, id_token_role_assertion, dev_mode,
  iam_api_access, require_par, dpop_bound, backchannel_logout_uri, backchannel_logout_session_required, secret_digest, sequence::text AS sequence, creation_date, change_date`;

/** Whether another app of the project already has this name (names are unique within a project, compared exactly). */
export async function appNameTaken(db: Queryable, projectId: string, name: string, exceptId?: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM apps WHERE project_id = $1 AND name = $2 AND id IS DISTINCT FROM $3', [projectId, name, exceptId ?? null]);
  return rows.length > 0;
}

export async function findApp(db: Queryable, id: string): Promise<AppRow | undefined> {
  const { rows } = await db.query<AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [id]);
  return rows[0];
}

/**
 * The app behind an engine client, whether it may obtain the API scope (its
 * own flag counts only while it belongs to the instance's first org), and
 * the state of its org (domain/may-act.ts).
 */
export async function findAppByClientId(db: Queryable, clientId: string): Promise<(AppRow & { api_access: boolean; org_state: string }) | undefined> {
  const { rows } = await db.query<AppRow & { api_access: boolean; org_state: string }>(
    `SELECT ${APP_COLUMNS}, (iam_api_access AND org_id = (SELECT default_org_id FROM instance LIMIT 1)) IS TRUE AS api_access,
            (SELECT o.state FROM orgs o WHERE o.id = apps.org_id) AS org_state
       FROM apps WHERE client_id = $1`,
    [clientId],
  );
  return rows[0];
}

export async function addAppKey(
  write: Write,
  key: { id: string; appId: string; projectId: string; orgId: string; publicJwk: object; expiresAt: Date | null },
): Promise<void> {
  await write.append({
    aggregateType: 'project',
    aggregateId: key.projectId,
    type: 'project.application.key.added',
    resourceOwner: key.orgId,
    payload: { appId: key.appId, keyId: key.id, expirationDate: key.expiresAt?.toISOString() ?? null },
  });
  await write.tx.query('INSERT INTO app_keys (id, app_id, public_jwk, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [
    key.id,
    key.appId,
    JSON.stringify(key.publicJwk),
    key.expiresAt,
    write.at,
  ]);
}

/** Public keys of an app that have not expired. */
export async function activeAppKeys(db: Queryable, appId: string): Promise<object[]> {
  const { rows } = await db.query<{ public_jwk: object }>(
    'SELECT public_jwk FROM app_keys WHERE app_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at',
    [appId],
  );
  return rows.map((row) => row.public_jwk);
}

/** Replaces an app's client secret; the event says that it changed, never what it is. */
export async function replaceAppSecret(write: Write, app: { id: string; projectId: string; orgId: string; secretDigest: Buffer }): Promise<void> {
  const sequence = await write.append({
    aggregateType: 'project',
    aggregateId: app.projectId,
    type: 'project.application.oidc.secret.changed',
    resourceOwner: app.orgId,
    payload: { appId: app.id },
  });
  await write.tx.query('UPDATE apps SET secret_digest = $2, sequence = $3, change_date = $4 WHERE id = $1', [app.id, app.secretDigest, sequence, write.at]);
}
