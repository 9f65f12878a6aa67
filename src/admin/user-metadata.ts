import Router from '@koa/router';
import type { Context } from 'koa';
import { removeUserMetadata, setUserMetadata } from '../commands/user-metadata.ts';
import { fieldError, type FieldViolation } from '../domain/errors.ts';
import type { Principal } from '../domain/roles.ts';
import type { PageRequest } from '../domain/search.ts';
import { MAX_METADATA_BYTES, METADATA_KEY, metadataValue } from '../domain/user-metadata.ts';
import { getUserMetadata, searchUserMetadata } from '../queries/user-metadata.ts';
import type { Database } from '../storage/database.ts';
import { actionSearchSchema } from './action-schemas.ts';
import { actingOrgId } from './org-context.ts';
import { limitRule } from './search-schemas.ts';
import { validator } from './validate.ts';

const valueSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['value'],
  properties: { value: { type: 'string', maxLength: Math.ceil(MAX_METADATA_BYTES / 3) * 4 + 4 } },
} as const;

const valueRule = (body: { value?: unknown }): FieldViolation[] => {
  if (typeof body.value !== 'string') return [];
  const value = metadataValue(body.value);
  return typeof value === 'string' ? [{ field: 'value', description: value }] : [];
};

const parseValue = validator<{ value: string }>(valueSchema, valueRule);
const parseSearch = validator<{ query?: PageRequest }>(actionSearchSchema, limitRule);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/** The key of the path, or 400 naming `key`: the router has already decoded it. */
function keyOf(ctx: Context): string {
  const key = ctx.params.key!;
  if (!METADATA_KEY.test(key)) throw fieldError('key', 'must be 1–200 letters, digits or _ . : - and not start with _');
  return key;
}

/** A user's metadata under `/management/v1/users/{userId}/metadata` (docs/api/users.md, "Metadata"). */
export function userMetadataRoutes(db: Database): Router {
  const router = new Router({ prefix: '/management/v1/users/:userId/metadata' });
  router.post('/_search', async (ctx) => {
    ctx.body = await searchUserMetadata(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, parseSearch(ctx.request.body ?? {}));
  });
  router.post('/:key', async (ctx) => {
    const key = keyOf(ctx);
    const value = metadataValue(parseValue(ctx.request.body ?? {}).value) as Buffer;
    ctx.body = await setUserMetadata(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, key, value);
  });
  router.get('/:key', async (ctx) => {
    ctx.body = await getUserMetadata(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, keyOf(ctx));
  });
  router.delete('/:key', async (ctx) => {
    ctx.body = await removeUserMetadata(db, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, keyOf(ctx));
  });
  return router;
}
