import Router from '@koa/router';
import type { Principal } from '../domain/roles.ts';
import type { FieldViolation } from '../domain/errors.ts';
import type { Database } from '../storage/database.ts';
import { getSmsRelay } from '../queries/sms-relay.ts';
import { removeSmsRelay, setSmsRelay } from '../commands/sms-relay.ts';
import { validator } from './validate.ts';

const smsRelaySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoint'],
  properties: { endpoint: { type: 'string', minLength: 1, maxLength: 2000 } },
} as const;

/** An absolute http(s) URL without credentials or fragment: where the SMS are POSTed. */
function endpointRule(body: { endpoint?: unknown }): FieldViolation[] {
  if (typeof body.endpoint !== 'string' || !body.endpoint) return [];
  const url = URL.canParse(body.endpoint) ? new URL(body.endpoint) : undefined;
  const problem = !url
    ? 'must be an absolute URL'
    : !['https:', 'http:'].includes(url.protocol)
      ? 'must be an http or https URL'
      : url.username || url.password
        ? 'must not contain credentials'
        : url.hash || body.endpoint.includes('#')
          ? 'must not contain a fragment'
          : /\s/.test(body.endpoint)
            ? 'must not contain white space'
            : undefined;
  return problem ? [{ field: 'endpoint', description: problem }] : [];
}

const parseRelay = validator<{ endpoint: string }>(smsRelaySchema, endpointRule);

export interface SmsAdmin {
  /** Seals the stored signing key. */
  sealingKey: Buffer;
}

/** `GET`, `PUT`, `DELETE /admin/v1/sms/http` (docs/api/sms.md), IAM_OWNER. */
export function smsRelayRoutes(db: Database, { sealingKey }: SmsAdmin): Router {
  const router = new Router();
  router.get('/admin/v1/sms/http', async (ctx) => {
    ctx.body = await getSmsRelay(db, ctx.state.principal as Principal);
  });
  router.put('/admin/v1/sms/http', async (ctx) => {
    const { endpoint } = parseRelay(ctx.request.body ?? {});
    ctx.body = await setSmsRelay(db, sealingKey, ctx.state.principal as Principal, endpoint);
  });
  router.delete('/admin/v1/sms/http', async (ctx) => {
    ctx.body = await removeSmsRelay(db, ctx.state.principal as Principal);
  });
  return router;
}
