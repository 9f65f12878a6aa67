import type { Middleware } from 'koa';
import type { Logger } from '../logger.ts';
import {
  AlreadyExists,
  type DomainError,
  InvalidArgument,
  NotFound,
  PayloadTooLarge,
  PermissionDenied,
  ResourceExhausted,
  Unauthenticated,
  Unavailable,
} from '../domain/errors.ts';
import { RETRY_AFTER_SECONDS, StoreUnavailable } from '../storage/outage.ts';
import { noteRefusal } from '../request-context.ts';

/** The gRPC-gateway error body of docs/api/README.md. */
export interface ApiErrorBody {
  code: number;
  message: string;
  details: Array<{ '@type': string; [field: string]: unknown }>;
}

const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** The ErrorInfo detail: the error's own reason when it has one (domain/errors.ts), else its code's generic one. */
function info(generic: string, err?: DomainError): ApiErrorBody['details'][number] {
  return { '@type': ERROR_INFO, reason: err?.reason ?? generic, domain: 'portcullis' };
}

/** The one place where errors become status codes and bodies. */
export function toWire(err: unknown, requestId: string): { status: number; body: ApiErrorBody; authenticate?: string; retryAfter?: number } {
  if (err instanceof InvalidArgument) {
    const badRequest = err.violations.length ? [{ '@type': BAD_REQUEST, fieldViolations: err.violations }] : [];
    // Named fields say enough without the generic reason; a specific one is always given.
    const details = badRequest.length && !err.reason ? badRequest : [...badRequest, info('INVALID_ARGUMENT', err)];
    return { status: 400, body: { code: 3, message: err.message, details } };
  }
  if (err instanceof PayloadTooLarge) return { status: 413, body: { code: 3, message: err.message, details: [info('PAYLOAD_TOO_LARGE', err)] } };
  if (err instanceof Unauthenticated) {
    return {
      status: 401,
      body: { code: 16, message: err.message, details: [info('UNAUTHENTICATED', err)] },
      authenticate: err.challenge ?? 'Bearer realm="portcullis"',
    };
  }
  if (err instanceof PermissionDenied) return { status: 403, body: { code: 7, message: err.message, details: [info('PERMISSION_DENIED', err)] } };
  if (err instanceof NotFound) return { status: 404, body: { code: 5, message: err.message, details: [info('NOT_FOUND', err)] } };
  if (err instanceof ResourceExhausted) {
    const details = [info('RESOURCE_EXHAUSTED', err), { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${err.retryAfter}s` }];
    return { status: 429, body: { code: 8, message: err.message, details }, retryAfter: err.retryAfter };
  }
  if (err instanceof AlreadyExists) return { status: 409, body: { code: 6, message: err.message, details: [info('ALREADY_EXISTS', err)] } };
  if (err instanceof StoreUnavailable) {
    return {
      status: 503,
      body: { code: 14, message: 'the service is temporarily unavailable, try again shortly', details: [info('UNAVAILABLE')] },
      retryAfter: RETRY_AFTER_SECONDS,
    };
  }
  if (err instanceof Unavailable)
    return { status: 503, body: { code: 14, message: err.message, details: [info('UNAVAILABLE', err)] }, retryAfter: err.retryAfter };
  return { status: 500, body: { code: 13, message: `internal error (request id ${requestId})`, details: [info('INTERNAL')] } };
}

/** The names of the fields a 400 blames (never their values). */
function violatedFields(body: ApiErrorBody): string[] {
  return body.details.flatMap((detail) => (Array.isArray(detail.fieldViolations) ? detail.fieldViolations.map((v: { field: string }) => v.field) : []));
}

export function apiErrors(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFound(`no API call ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const wire = toWire(err, ctx.state.requestId);
      if (wire.status === 500) log.error({ err, requestId: ctx.state.requestId }, 'admin API error');
      else noteRefusal(ctx.req, { code: wire.body.code, message: wire.body.message, fields: violatedFields(wire.body) });
      ctx.status = wire.status;
      ctx.body = wire.body;
      if (wire.authenticate) ctx.set('WWW-Authenticate', wire.authenticate);
      if (wire.retryAfter) ctx.set('Retry-After', String(wire.retryAfter));
    }
  };
}
