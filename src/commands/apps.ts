import type { Database, Queryable } from '../storage/database.ts';
import { beginWrite, writeDetails } from '../storage/event-log.ts';
import { addApp, addAppKey, appNameTaken, changeApp, removeApp, replaceAppSecret, settingsOf, type AppRow } from '../storage/apps.ts';
import { APP_DEFAULTS, appViolations, needsSecret, toClientMetadata, type AppSettings } from '../domain/apps.ts';
import { AlreadyExists, InvalidArgument, PermissionDenied, fieldError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { apiAccessProblem, hasInstanceRole, type Principal } from '../domain/roles.ts';
import { findInstance } from '../storage/instance.ts';
import { generateSecret, secretDigest } from '../security/secrets.ts';
import { generateMachineKeyPair } from '../security/machine-keys.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import type { Announce } from '../storage/invalidation.ts';
import { projectOfOrg } from '../queries/projects.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import { appOfProject } from '../queries/apps.ts';

export interface AppDeps {
  db: Database;
  engine: EngineHolder;
  announce: Announce;
  secretKey: Buffer;
}

const ENGINE_FIELD: Array<[RegExp, string]> = [
  [/^post_logout_redirect_uris/, 'postLogoutRedirectUris'],
  [/^redirect_uris/, 'redirectUris'],
  [/^response_types/, 'responseTypes'],
  [/^grant_types/, 'grantTypes'],
  [/^token_endpoint_auth_method/, 'authMethodType'],
];

/**
 * Our rules first (they name the field precisely), then the engine's own
 * client validation, so that no app is stored that the engine would refuse.
 */
async function checkSettings(deps: AppDeps, settings: AppSettings, clientId: string): Promise<void> {
  const violations = appViolations(settings);
  if (violations.length) throw new InvalidArgument(`invalid app: ${violations.map((v) => `${v.field} ${v.description}`).join('; ')}`, violations);
  const metadata = toClientMetadata({
    clientId,
    projectId: 'check',
    orgId: 'check',
    settings,
    secretDigest: needsSecret(settings.authMethodType) ? 'check' : null,
    publicKeys: [],
    apiAccess: false,
  });
  try {
    await deps.engine.provider.Client.validate(metadata as never);
  } catch (err) {
    const description = (err as { error_description?: string }).error_description ?? 'is not accepted by the OIDC engine';
    const field = ENGINE_FIELD.find(([pattern]) => pattern.test(description))?.[1] ?? 'app';
    throw fieldError(field, description);
  }
}

async function checkApiAccess(db: Queryable, actor: Principal, orgId: string, from: boolean, to: boolean): Promise<void> {
  if (!from && !to) return;
  const problem = apiAccessProblem(actor, { from, to, appOrgId: orgId, firstOrgId: (await findInstance(db))?.default_org_id });
  if (problem === 'permission') throw new PermissionDenied('only an instance owner (IAM_OWNER) may change iamApiAccess');
  if (problem === 'org') throw fieldError('iamApiAccess', "only apps of the instance's first organization may access the instance API");
}

/**
 * An app that may obtain the API scope hands out instance-owner tokens when
 * an instance owner signs in through it (the console is one): whoever moves
 * its redirect URIs, keys or existence could catch them, so that is the
 * instance owner's business only.
 */
function assertMayChangeApiApp(actor: Principal, app: AppRow): void {
  if (app.iam_api_access && !hasInstanceRole(actor, 'IAM_OWNER'))
    throw new PermissionDenied('only an instance owner (IAM_OWNER) may change an app with iamApiAccess');
}

/** Names are unique within a project; checked after the write lock is taken, so two creates cannot both pass. */
async function assertNameFree(db: Queryable, projectId: string, name: string, appId?: string): Promise<void> {
  if (await appNameTaken(db, projectId, name, appId)) throw new AlreadyExists(`an app named "${name}" already exists in this project`);
}

/** An app without browser sign-in (a device app, say) has no response type unless it names one. */
function defaultResponseTypes(grants: AppSettings['grantTypes'] | undefined): AppSettings['responseTypes'] {
  const browser = !grants || grants.includes('OIDC_GRANT_TYPE_AUTHORIZATION_CODE') || grants.includes('OIDC_GRANT_TYPE_IMPLICIT');
  return browser ? APP_DEFAULTS.responseTypes : [];
}

export async function createOidcApp(deps: AppDeps, actor: Principal, orgId: string, projectId: string, input: Partial<AppSettings> & { name: string }) {
  requireOrgOwner(actor, orgId);
  await projectOfOrg(deps.db, orgId, projectId);
  const settings: AppSettings = { ...APP_DEFAULTS, responseTypes: defaultResponseTypes(input.grantTypes), ...input };
  await checkApiAccess(deps.db, actor, orgId, APP_DEFAULTS.iamApiAccess, settings.iamApiAccess);
  const appId = newId();
  const clientId = newId();
  await checkSettings(deps, settings, clientId);
  const clientSecret = needsSecret(settings.authMethodType) ? generateSecret() : undefined;

  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    await projectOfOrg(tx, orgId, projectId);
    await assertNameFree(tx, projectId, settings.name);
    await addApp(write, { id: appId, projectId, orgId, clientId, settings, secretDigest: clientSecret ? secretDigest(deps.secretKey, clientSecret) : null });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { appId, clientId, ...(clientSecret ? { clientSecret } : {}), details };
}

/**
 * Changes some settings of an app; the result is checked as a whole. An app
 * switched to a secret-based method without a secret gets one (returned once).
 * The app is read after the write lock is taken, so concurrent changes apply
 * one after the other instead of overwriting each other.
 */
export async function changeOidcApp(deps: AppDeps, actor: Principal, orgId: string, projectId: string, appId: string, patch: Partial<AppSettings>) {
  requireOrgOwner(actor, orgId);
  const { clientSecret, details } = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const app = await appOfProject(tx, orgId, projectId, appId);
    assertMayChangeApiApp(actor, app);
    const settings: AppSettings = { ...settingsOf(app), ...patch };
    await assertNameFree(tx, projectId, settings.name, appId);
    await checkApiAccess(tx, actor, orgId, app.iam_api_access, settings.iamApiAccess);
    await checkSettings(deps, settings, app.client_id);
    const clientSecret = needsSecret(settings.authMethodType) && !app.secret_digest ? generateSecret() : undefined;
    await changeApp(write, { id: appId, projectId, orgId, settings, ...(clientSecret ? { secretDigest: secretDigest(deps.secretKey, clientSecret) } : {}) });
    return { clientSecret, details: writeDetails(write, orgId) };
  });
  deps.announce('clients');
  return { ...(clientSecret ? { clientSecret } : {}), details };
}

export async function removeOidcApp(deps: AppDeps, actor: Principal, orgId: string, projectId: string, appId: string) {
  requireOrgOwner(actor, orgId);
  const details = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const app = await appOfProject(tx, orgId, projectId, appId);
    assertMayChangeApiApp(actor, app);
    await removeApp(write, { id: appId, projectId, orgId });
    return writeDetails(write, orgId);
  });
  deps.announce('clients');
  return { details };
}

/** A key pair for private_key_jwt (docs/api/projects-apps.md); the private key is returned once in the key file. */
export async function addOidcAppKey(deps: AppDeps, actor: Principal, orgId: string, projectId: string, appId: string, input: { expirationDate?: string }) {
  requireOrgOwner(actor, orgId);
  const expiresAt = input.expirationDate ? new Date(input.expirationDate) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw fieldError('expirationDate', 'must be in the future');
  const keyId = newId();
  const { privatePem, publicJwk } = await generateMachineKeyPair(keyId);

  const { clientId, details } = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const app = await appOfProject(tx, orgId, projectId, appId);
    assertMayChangeApiApp(actor, app);
    if (app.auth_method !== 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT')
      throw fieldError('authMethodType', 'keys are for apps using OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT');
    await addAppKey(write, { id: keyId, appId, projectId, orgId, publicJwk, expiresAt });
    return { clientId: app.client_id, details: writeDetails(write, orgId) };
  });
  deps.announce('clients');
  const keyFile = JSON.stringify({ type: 'application', keyId, key: privatePem, appId, clientId });
  return { id: keyId, keyDetails: Buffer.from(keyFile).toString('base64'), ...(expiresAt ? { expirationDate: expiresAt.toISOString() } : {}), details };
}

/**
 * A new client secret for an app authenticating with one (BASIC or POST),
 * returned once; the old one stops working on every node at once, as the
 * engine's client is reloaded everywhere on the announcement.
 */
export async function regenerateOidcAppSecret(deps: AppDeps, actor: Principal, orgId: string, projectId: string, appId: string) {
  requireOrgOwner(actor, orgId);
  const clientSecret = generateSecret();
  const { clientId, details } = await deps.db.transaction(async (tx) => {
    const write = await beginWrite(tx, actor);
    const app = await appOfProject(tx, orgId, projectId, appId);
    assertMayChangeApiApp(actor, app);
    if (!needsSecret(settingsOf(app).authMethodType))
      throw fieldError('authMethodType', 'only apps using OIDC_AUTH_METHOD_TYPE_BASIC or OIDC_AUTH_METHOD_TYPE_POST have a client secret');
    await replaceAppSecret(write, { id: appId, projectId, orgId, secretDigest: secretDigest(deps.secretKey, clientSecret) });
    return { clientId: app.client_id, details: writeDetails(write, orgId) };
  });
  deps.announce('clients');
  return { clientId, clientSecret, details };
}
