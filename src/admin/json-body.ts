import type { Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { InvalidArgument, PayloadTooLarge } from '../domain/errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
}

/**
 * JSON bodies only, at most 1 MiB; anything else is the caller's mistake
 * and answered 400 (413 when too large), never 500.
 */
export function jsonBody(): Middleware[] {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: MAX_BODY_BYTES,
    jsonStrict: true,
    onError(err) {
      const status = (err as { status?: number }).status;
      if (status === 413) throw new PayloadTooLarge('request body exceeds 1 MiB');
      throw new InvalidArgument(`request body is not valid JSON${status === 415 ? ' (unsupported encoding)' : ''}`);
    },
  });
  const requireJson: Middleware = async (ctx, next) => {
    if (['POST', 'PUT', 'PATCH'].includes(ctx.method) && hasBody(ctx.req.headers) && !ctx.is('application/json')) {
      throw new InvalidArgument('Content-Type must be application/json');
    }
    if (Number(ctx.get('content-length') || 0) > MAX_BODY_BYTES) throw new PayloadTooLarge('request body exceeds 1 MiB');
    await next();
  };
  return [requireJson, parse];
}
