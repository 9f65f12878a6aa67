import type { Middleware } from 'koa';

/** A value PostgreSQL cannot hold in text (NUL), or that is not Unicode. */
function unstorable(value: unknown): boolean {
  return typeof value === 'string' && (value.includes('\u0000') || !value.isWellFormed());
}

/**
 * No login name, password or code has a NUL: a form field holding one (or
 * a lone surrogate) is dropped as the form is read, for every page at once,
 * so the page answers as for a field left empty (its own validation error)
 * and nothing unstorable reaches a query.
 */
export const dropUnstorableFields: Middleware = async (ctx, next) => {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object') {
    for (const [name, value] of Object.entries(body)) {
      if (unstorable(value) || (Array.isArray(value) && value.some(unstorable))) delete body[name];
    }
  }
  await next();
};
