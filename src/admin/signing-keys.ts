import Router from '@koa/router';
import type { Database } from '../storage/database.ts';
import { PermissionDenied } from '../domain/errors.ts';
import { hasInstanceRole, type Principal } from '../domain/roles.ts';
import { listSigningKeys } from '../queries/signing-keys.ts';
import { rotateSigningKeys, type KeyRotationSettings } from '../commands/rotate-signing-keys.ts';

export interface SigningKeyAdmin extends KeyRotationSettings {
  retainFor: number;
  /** Makes this node's engine pick up the new keys before answering. */
  refresh(): Promise<void>;
}

/** `GET /admin/v1/signing_keys`, `POST /admin/v1/signing_keys/_rotate` (docs/api/signing-keys.md); IAM_OWNER. */
export function signingKeyRoutes(db: Database, keys: SigningKeyAdmin): Router {
  const router = new Router({ prefix: '/admin/v1/signing_keys' });
  router.get('/', async (ctx) => {
    if (!hasInstanceRole(ctx.state.principal as Principal, 'IAM_OWNER')) throw new PermissionDenied('listing signing keys requires IAM_OWNER');
    ctx.body = { result: await listSigningKeys(db, keys.retainFor) };
  });
  router.post('/_rotate', async (ctx) => {
    const { details } = await rotateSigningKeys(db, keys, ctx.state.principal as Principal);
    await keys.refresh();
    ctx.body = { details, result: await listSigningKeys(db, keys.retainFor) };
  });
  return router;
}
