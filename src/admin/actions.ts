import Router from '@koa/router';
import type { Context } from 'koa';
import { addTarget, changeTarget, removeTarget, setExecution, type ExecutionInput, type TargetInput } from '../commands/actions.ts';
import type { Principal } from '../domain/roles.ts';
import type { PageRequest } from '../domain/search.ts';
import { getDeliveryState, getTarget, searchExecutions, searchTargets } from '../queries/actions.ts';
import type { Database } from '../storage/database.ts';
import type { Announce } from '../storage/invalidation.ts';
import { actionSearchSchema, executionSchema, targetRules, targetSchema } from './action-schemas.ts';
import { limitRule } from './search-schemas.ts';
import { validator } from './validate.ts';

const parseTarget = validator<TargetInput>(targetSchema, targetRules);
const parseExecution = validator<ExecutionInput>(executionSchema);
const parseSearch = validator<{ query?: PageRequest }>(actionSearchSchema, limitRule);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/** Targets, executions and delivery state under `/v2beta/actions` (docs/api/actions.md), for IAM_OWNER. */
export function actionRoutes(db: Database, announce: Announce, sealingKey: Buffer): Router {
  const router = new Router();
  router.post('/v2beta/actions/targets', async (ctx) => {
    ctx.body = await addTarget(db, sealingKey, principal(ctx), parseTarget(ctx.request.body ?? {}));
  });
  router.post('/v2beta/actions/targets/_search', async (ctx) => {
    ctx.body = await searchTargets(db, principal(ctx), parseSearch(ctx.request.body ?? {}));
  });
  router.get('/v2beta/actions/targets/:targetId', async (ctx) => {
    ctx.body = await getTarget(db, principal(ctx), ctx.params.targetId!);
  });
  router.put('/v2beta/actions/targets/:targetId', async (ctx) => {
    ctx.body = await changeTarget(db, announce, principal(ctx), ctx.params.targetId!, parseTarget(ctx.request.body ?? {}));
  });
  router.delete('/v2beta/actions/targets/:targetId', async (ctx) => {
    ctx.body = await removeTarget(db, announce, principal(ctx), ctx.params.targetId!);
  });
  router.get('/v2beta/actions/targets/:targetId/state', async (ctx) => {
    ctx.body = await getDeliveryState(db, principal(ctx), ctx.params.targetId!);
  });
  router.put('/v2beta/actions/executions', async (ctx) => {
    ctx.body = await setExecution(db, announce, principal(ctx), parseExecution(ctx.request.body ?? {}));
  });
  router.post('/v2beta/actions/executions/_search', async (ctx) => {
    ctx.body = await searchExecutions(db, principal(ctx), parseSearch(ctx.request.body ?? {}));
  });
  return router;
}
