import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';
import { AlreadyExists, InvalidArgument, NotFound } from '../domain/errors.ts';
import { PreconditionFailed, ScimInvalid } from '../domain/scim/errors.ts';
import { ERROR_SCHEMA } from '../domain/scim/user.ts';
import { toWire } from '../admin/errors.ts';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** The error body of RFC 7644 3.12: the status as a string, a `scimType` for 400 and 409. */
export interface ScimErrorBody {
  schemas: [typeof ERROR_SCHEMA];
  status: string;
  scimType?: string;
  detail: string;
}

function scimTypeOf(err: unknown): string | undefined {
  if (err instanceof ScimInvalid) return err.scimType;
  if (err instanceof InvalidArgument) return 'invalidValue';
  if (err instanceof AlreadyExists) return 'uniqueness';
  return undefined;
}

/** The status only SCIM answers (RFC 7644 3.12, 3.14): 412 for a failed If-Match. */
function scimOnly(err: unknown): { status: number; body: { message: string }; authenticate?: string; retryAfter?: number } | undefined {
  if (err instanceof PreconditionFailed) return { status: 412, body: { message: err.message } };
  return undefined;
}

/**
 * Errors become SCIM error bodies here. The status (and the challenge and
 * Retry-After headers) come from the one mapping of the APIs
 * (src/admin/errors.ts), so a refusal means the same in both.
 */
export function scimErrors(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFound(`no SCIM endpoint ${ctx.method} ${ctx.path}`);
      if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = { schemas: [ERROR_SCHEMA], status: '405', detail: `${ctx.method} is not allowed here; use ${ctx.response.get('Allow')}` };
        ctx.type = SCIM_CONTENT_TYPE;
      }
    } catch (err) {
      const wire = scimOnly(err) ?? toWire(err, ctx.state.requestId);
      if (wire.status === 500) log.error({ err, requestId: ctx.state.requestId }, 'SCIM API error');
      const scimType = scimTypeOf(err);
      const body: ScimErrorBody = { schemas: [ERROR_SCHEMA], status: String(wire.status), ...(scimType ? { scimType } : {}), detail: wire.body.message };
      ctx.status = wire.status;
      ctx.body = body;
      ctx.type = SCIM_CONTENT_TYPE;
      ctx.set('Cache-Control', 'no-store');
      if (wire.authenticate) ctx.set('WWW-Authenticate', wire.authenticate);
      if (wire.retryAfter) ctx.set('Retry-After', String(wire.retryAfter));
    }
  };
}
