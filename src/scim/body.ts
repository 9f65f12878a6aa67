import type { Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { PayloadTooLarge } from '../domain/errors.ts';
import { ScimInvalid } from '../domain/scim/errors.ts';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, jsonDepth } from '../admin/json-body.ts';

const SCIM_JSON = 'application/scim+json';

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
}

/** Strings PostgreSQL cannot store (NUL) or that are no Unicode (lone surrogates), anywhere in the body; the depth is already bounded. */
function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed();
  if (Array.isArray(value)) return value.some(unstorable);
  if (value && typeof value === 'object') return Object.entries(value).some(([key, item]) => unstorable(key) || unstorable(item));
  return false;
}

/**
 * Request bodies of RFC 7644 3.1: `application/scim+json`, or
 * `application/json`, at most 1 MiB (413), nesting at most 32 levels.
 * Anything that is not such JSON is 400 `invalidSyntax`, never a 500.
 */
export function scimBody(): Middleware[] {
  const parse = bodyParser({
    // Its JSON types include application/scim+json.
    enableTypes: ['json'],
    jsonLimit: MAX_BODY_BYTES,
    jsonStrict: true,
    onError(err) {
      if ((err as { status?: number }).status === 413) throw new PayloadTooLarge('request body exceeds 1 MiB');
      throw new ScimInvalid('invalidSyntax', 'the request body is not valid JSON');
    },
  });
  const requireJson: Middleware = async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method)) return next();
    if (Number(ctx.get('content-length') || 0) > MAX_BODY_BYTES) throw new PayloadTooLarge('request body exceeds 1 MiB');
    if (!hasBody(ctx.req.headers)) throw new ScimInvalid('invalidSyntax', 'the request needs a JSON body');
    if (!ctx.is(SCIM_JSON, 'application/json')) throw new ScimInvalid('invalidSyntax', `Content-Type must be ${SCIM_JSON} (or application/json)`);
    await next();
  };
  const checked: Middleware = async (ctx, next) => {
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    if (typeof raw === 'string' && jsonDepth(raw) > MAX_JSON_DEPTH)
      throw new ScimInvalid('invalidSyntax', `the body nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (unstorable(ctx.request.body)) throw new ScimInvalid('invalidValue', 'the body holds a NUL character or invalid Unicode');
    await next();
  };
  return [requireJson, parse, checked];
}

/**
 * A message body's fields by their canonical names (names are
 * case-insensitive, RFC 7643 2.1), null ones dropped; a body that is no
 * object, or a field of another name, is `invalidSyntax`.
 */
export function canonicalFields(body: unknown, fields: string[], message: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ScimInvalid('invalidSyntax', `the ${message} must be a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const field = fields.find((name) => name.toLowerCase() === key.toLowerCase());
    if (!field) throw new ScimInvalid('invalidSyntax', `"${key.slice(0, 60)}" is not a field of a ${message}`);
    if (value !== null) out[field] = value;
  }
  return out;
}
