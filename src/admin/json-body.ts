import type { Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { InvalidArgument, PayloadTooLarge } from '../domain/errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** No call's body nests deeper than a few levels; 32 leaves room and keeps every walk of a body shallow. */
export const MAX_JSON_DEPTH = 32;

/**
 * How deep the JSON text nests its arrays and objects, counted in one loop
 * over the characters (brackets inside strings do not count), so a hostile
 * body is refused before any recursive walk of the parsed value.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

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
  const shallow: Middleware = async (ctx, next) => {
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (typeof raw === 'string' && jsonDepth(raw) > MAX_JSON_DEPTH) {
      throw new InvalidArgument(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, [
        { field: '(body)', description: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    await next();
  };
  return [requireJson, parse, shallow];
}
