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
  };
}

// The event payload of an app: its settings, never its secret.
function settingsPayload(settings: AppSettings): Record<string, unknown> {
  return { ...settings };
}

const SETTINGS_PARAMS = (s: AppSettings) => [
  s.name, s.redirectUris, s.postLogoutRedirectUris, s.responseTypes, s.grantTypes, s.appType, s.authMethodType,
  s.accessTokenType, s.idTokenUserinfoAssertion, s.accessTokenRoleAssertion, s.idTokenRoleAssertion, s.devMode, s.iamApiAccess,
];

export async function addApp(write: Write, app: { id: string; projectId: string; orgId: string; clientId: string; settings: AppSettings; secretDigest: Buffer | null }): Promise<void> {
  const sequence = await write.append({ aggregateType: 'project', aggregateId: app.projectId, type: 'project.application.added', resourceOwner: app.orgId, payload: { appId: app.id, clientId: app.clientId, ...settingsPayload(app.settings) } });
  await write.tx.query(
    `INSERT INTO apps (name, redirect_uris, post_logout_redirect_uris, response_types, grant_types, app_type, auth_method,
                       access_token_type, id_token_userinfo_assertion, access_token_role_assertion, id_token_role_assertion, dev_mode, iam_api_access,
                       id, project_id, org_id, client_id, secret_digest, sequence, creation_date, change_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20)`,
    [...SETTINGS_PARAMS(app.settings), app.id, app.projectId, app.orgId, app.clientId, app.secretDigest, sequence, write.at],
  );
}

/** Replaces an app's settings; `secretDigest` undefined keeps the current secret. */
export async function changeApp(write: Write, app: { id: string; projectId: string; orgId: string; settings: AppSettings; secretDigest?: Buffer | null }): Promise<void> {
  const sequence = await write.append({ aggregateType: 'project', aggregateId: app.projectId, type: 'project.application.changed', resourceOwner: app.orgId, payload: { appId: app.id, ...settingsPayload(app.settings), secretChanged: app.secretDigest !== undefined } });
  await write.tx.query(
    `UPDATE apps SET name = $1, redirect_uris = $2, post_logout_redirect_uris = $3, response_types = $4, grant_types = $5, app_type = $6,
                     auth_method = $7, access_token_type = $8, id_token_userinfo_assertion = $9, access_token_role_assertion = $10,
                     id_token_role_assertion = $11, dev_mode = $12, iam_api_access = $13, sequence = $15, change_date = $16,
                     secret_digest = CASE WHEN $17 THEN $18::bytea ELSE secret_digest END
      WHERE id = $14`,
    [...SETTINGS_PARAMS(app.settings), app.id, sequence, write.at, app.secretDigest !== undefined, app.secretDigest ?? null],
  );
}

export async function removeApp(write: Write, app: { id: string; projectId: string; orgId: string }): Promise<void> {
  await write.append({ aggregateType: 'project', aggregateId: app.projectId, type: 'project.application.removed', resourceOwner: app.orgId, payload: { appId: app.id } });
  await write.tx.query('DELETE FROM apps WHERE id = $1', [app.id]);
}

const APP_COLUMNS = `id, project_id, org_id, client_id, name, redirect_uris, post_logout_redirect_uris, response_types, grant_types, app_type,
  auth_method, access_token_type, id_token_userinfo_assertion, access_token_role_assertion, id_token_role_assertion, dev_mode,
  iam_api_access, secret_digest, sequence::text AS sequence, creation_date, change_date`;

export async function findApp(db: Queryable, id: string): Promise<AppRow | undefined> {
  const { rows } = await db.query<AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [id]);
  return rows[0];
}

/**
 * The app behind an engine client, and whether it may obtain the API scope:
 * its own flag counts only while it belongs to the instance's first org.
 */
export async function findAppByClientId(db: Queryable, clientId: string): Promise<(AppRow & { api_access: boolean }) | undefined> {
  const { rows } = await db.query<AppRow & { api_access: boolean }>(
    `SELECT ${APP_COLUMNS}, (iam_api_access AND org_id = (SELECT default_org_id FROM instance LIMIT 1)) IS TRUE AS api_access
       FROM apps WHERE client_id = $1`,
    [clientId],
  );
  return rows[0];
}

export async function addAppKey(write: Write, key: { id: string; appId: string; projectId: string; orgId: string; publicJwk: object; expiresAt: Date | null }): Promise<void> {
  await write.append({ aggregateType: 'project', aggregateId: key.projectId, type: 'project.application.key.added', resourceOwner: key.orgId, payload: { appId: key.appId, keyId: key.id, expirationDate: key.expiresAt?.toISOString() ?? null } });
  await write.tx.query('INSERT INTO app_keys (id, app_id, public_jwk, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [key.id, key.appId, JSON.stringify(key.publicJwk), key.expiresAt, write.at]);
}

/** Public keys of an app that have not expired. */
export async function activeAppKeys(db: Queryable, appId: string): Promise<object[]> {
  const { rows } = await db.query<{ public_jwk: object }>('SELECT public_jwk FROM app_keys WHERE app_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at', [appId]);
  return rows.map((row) => row.public_jwk);
}
