import Router from '@koa/router';
import type { Principal } from '../domain/roles.ts';
import type { AppSettings } from '../domain/apps.ts';
import { addOidcAppKey, changeOidcApp, createOidcApp, regenerateOidcAppSecret, removeOidcApp, type AppDeps } from '../commands/apps.ts';
import { getOidcApp } from '../queries/apps.ts';
import { changeSamlAppCommand, createSamlApp, removeSamlAppCommand, type ChangeSamlAppInput, type CreateSamlAppInput } from '../commands/saml-apps.ts';
import { samlAppOfProject, toSamlView } from '../queries/saml-apps.ts';
import { requireOrgOwner } from '../domain/permissions.ts';
import type { OutboundFetch } from '../outbound/client.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { appKeySchema, changeAppSchema, changeSamlAppSchema, createAppSchema, createSamlAppSchema } from './app-schemas.ts';
import { emptySchema } from './user-schemas.ts';

const parseCreate = validator<Partial<AppSettings> & { name: string }>(createAppSchema);
const parseChange = validator<Partial<AppSettings>>(changeAppSchema);
const parseEmpty = validator<Record<string, never>>(emptySchema);
const parseSaml = validator<CreateSamlAppInput>(createSamlAppSchema);
const parseSamlChange = validator<ChangeSamlAppInput>(changeSamlAppSchema);
const parseKey = validator<{ type: 'KEY_TYPE_JSON'; expirationDate?: string }>(appKeySchema);

/**
 * Apps of a project (docs/api/projects-apps.md): OIDC apps, the engine's
 * clients, and SAML apps (docs/api/saml-apps.md); reading and removing an
 * app serve both kinds.
 */
export function appRoutes(deps: AppDeps & { fetchMetadata: OutboundFetch }): Router {
  const router = new Router({ prefix: '/management/v1/projects/:projectId/apps' });
  const principal = (ctx: { state: Record<string, unknown> }) => ctx.state.principal as Principal;
  router.post('/oidc', async (ctx) => {
    const input = parseCreate(ctx.request.body);
    ctx.body = await createOidcApp(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, input);
  });
  router.post('/saml', async (ctx) => {
    const input = parseSaml(ctx.request.body);
    ctx.body = await createSamlApp(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, input);
  });
  router.get('/:appId', async (ctx) => {
    const orgId = await actingOrgId(ctx, deps.db);
    requireOrgOwner(principal(ctx), orgId);
    const saml = await samlAppOfProject(deps.db, orgId, ctx.params.projectId!, ctx.params.appId!);
    if (saml) {
      ctx.body = { app: toSamlView(saml) };
      return;
    }
    ctx.body = { app: await getOidcApp(deps.db, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, ctx.params.appId!) };
  });
  router.put('/:appId', async (ctx) => {
    const orgId = await actingOrgId(ctx, deps.db);
    requireOrgOwner(principal(ctx), orgId);
    if (await samlAppOfProject(deps.db, orgId, ctx.params.projectId!, ctx.params.appId!)) {
      const input = parseSamlChange(ctx.request.body);
      ctx.body = await changeSamlAppCommand(deps, principal(ctx), orgId, ctx.params.projectId!, ctx.params.appId!, input);
      return;
    }
    const patch = parseChange(ctx.request.body);
    ctx.body = await changeOidcApp(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, ctx.params.appId!, patch);
  });
  router.delete('/:appId', async (ctx) => {
    const orgId = await actingOrgId(ctx, deps.db);
    requireOrgOwner(principal(ctx), orgId);
    if (await samlAppOfProject(deps.db, orgId, ctx.params.projectId!, ctx.params.appId!)) {
      ctx.body = await removeSamlAppCommand(deps, principal(ctx), orgId, ctx.params.projectId!, ctx.params.appId!);
      return;
    }
    ctx.body = await removeOidcApp(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, ctx.params.appId!);
  });
  router.post('/:appId/keys', async (ctx) => {
    const input = parseKey(ctx.request.body);
    ctx.body = await addOidcAppKey(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, ctx.params.appId!, input);
  });
  router.post('/:appId/_regenerate_secret', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await regenerateOidcAppSecret(deps, principal(ctx), await actingOrgId(ctx, deps.db), ctx.params.projectId!, ctx.params.appId!);
  });
  return router;
}
