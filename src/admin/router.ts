import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import type { Logger } from '../logger.ts';
import type { OrgSettings } from '../commands/setup-org.ts';
import { apiErrors } from './errors.ts';
import { jsonBody } from './json-body.ts';
import { authenticate, type TokenVerifier } from './authenticate.ts';
import { orgRoutes } from './orgs.ts';
import { userRoutes } from './users.ts';

export interface AdminApiDeps {
  db: Database;
  log: Logger;
  settings: OrgSettings;
  verifiers: TokenVerifier[];
}

const API_PREFIXES = ['/admin/v1', '/management/v1', '/v2'];

/**
 * The admin and management REST API (SPEC 3): errors in one format, JSON
 * bodies, bearer authentication, then the resource routes.
 */
export function adminRouter({ db, log, settings, verifiers }: AdminApiDeps): Router {
  const resources = [orgRoutes(db, settings), userRoutes(db)];
  const router = new Router();
  router.use(API_PREFIXES, apiErrors(log), ...jsonBody(), authenticate(db, verifiers));
  for (const resource of resources) router.use(resource.routes(), resource.allowedMethods({ throw: false }));
  router.all(API_PREFIXES.map((prefix) => `${prefix}/{*rest}`), () => {});
  return router;
}
