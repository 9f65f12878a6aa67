import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Logger } from '../logger.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import { apiErrors } from './errors.ts';
import { jsonBody } from './json-body.ts';
import { authenticate, type TokenVerifier } from './authenticate.ts';
import { orgRoutes } from './orgs.ts';
import { userRoutes } from './users.ts';
import { projectRoutes } from './projects.ts';
import { appRoutes } from './apps.ts';
import type { EngineHolder } from '../engine/engine-holder.ts';
import type { ClientDirectory } from '../../adapters/clients.ts';

export interface AdminApiDeps {
  db: Database;
  log: Logger;
  settings: OrgSettings;
  verifiers: TokenVerifier[];
  /** Key of the keyed digests of generated secrets. */
  secretKey: Buffer;
  clients: ClientDirectory;
  engine: EngineHolder;
}

const API_PREFIXES = ['/admin/v1', '/management/v1', '/v2'];

/**
 * The admin and management REST API (SPEC 3): errors in one format, JSON
 * bodies, bearer authentication, then the resource routes.
 */
export function adminRouter({ db, log, settings, verifiers, secretKey, clients, engine }: AdminApiDeps): Router {
  const resources = [orgRoutes(db, settings), userRoutes(db), projectRoutes(db), appRoutes({ db, engine, clients, secretKey })];
  const router = new Router();
  router.use(API_PREFIXES, apiErrors(log), ...jsonBody(), authenticate(db, verifiers));
  for (const resource of resources) router.use(resource.routes(), resource.allowedMethods({ throw: false }));
  router.all(API_PREFIXES.map((prefix) => `${prefix}/{*rest}`), () => {});
  return router;
}
