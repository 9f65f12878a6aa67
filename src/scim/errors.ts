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
 * An error as the SCIM error body and its status. The status (and the
 * challenge and Retry-After) come from the one mapping of the APIs
 * (src/admin/errors.ts), so a refusal means the same in both.
 */
export function scimErrorOf(err: unknown, requestId: string, log: Logger): { status: number; body: ScimErrorBody; authenticate?: string; retryAfter?: number } {
  const wire = scimOnly(err) ?? toWire(err, requestId);
  if (wire.status === 500) log.error({ err, requestId }, 'SCIM API error');
  const scimType = scimTypeOf(err);
  return {
    status: wire.status,
    body: { schemas: [ERROR_SCHEMA], status: String(wire.status), ...(scimType ? { scimType } : {}), detail: wire.body.message },
    ...(wire.authenticate ? { authenticate: wire.authenticate } : {}),
    ...(wire.retryAfter ? { retryAfter: wire.retryAfter } : {}),
  };
}

/** Errors become SCIM error bodies here. */
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
      const error = scimErrorOf(err, ctx.state.requestId, log);
      ctx.status = error.status;
      ctx.body = error.body;
      ctx.type = SCIM_CONTENT_TYPE;
      ctx.set('Cache-Control', 'no-store');
      if (error.authenticate) ctx.set('WWW-Authenticate', error.authenticate);
      if (error.retryAfter) ctx.set('Retry-After', String(error.retryAfter));
    }
  };
}
