import querystring from 'node:querystring';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { errorPage } from '../pages/engine-pages.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import { renderOAuthError, type OAuthError } from './oauth-errors.ts';
import type { EngineRule } from './rule-dispatch.ts';

// The parameters of every engine request, read once at the door: the query,
// and a form body (bounded) which the engine then takes as already read
// (lib/shared/selective_body.js falls back to req.body). PostgreSQL cannot
// hold NUL in text, and no OAuth or OpenID parameter has one: a NUL in any
// parameter of any endpoint is `invalid_request` here, before a rule or the
// engine stores it (an interaction, a code, a session).

const MAX_FORM_BYTES = 64 * 1024;
const FORM = Symbol('form body');

type WithForm = { [FORM]?: string; body?: string };

/**
 * Reads the form body, bounded. Events rather than an async iterator: this
 * runs on every token and introspection request. Past the bound it stops
 * reading and the connection closes after the answer, so the rest is never read.
 */
function readForm(ctx: KoaContextWithOIDC): Promise<string> {
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      ctx.set('Connection', 'close');
      reject(new errors.InvalidRequest('request body is too large'));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    // A client that hangs up mid-body: nobody is left to answer.
    const onClose = () => onError(new Error('request closed before its body ended'));
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** A form POST: the body the engine will parse. */
export function isFormPost(ctx: KoaContextWithOIDC): boolean {
  return ctx.method === 'POST' && Boolean(ctx.is('application/x-www-form-urlencoded'));
}

/**
 * The raw form body of a form POST, read once per request: `refuseNulParameters`
 * reads it first, the rules of client-request-rules.ts take it from there.
 */
export async function formBody(ctx: KoaContextWithOIDC): Promise<string> {
  const req = ctx.req as typeof ctx.req & WithForm;
  if (req[FORM] === undefined) {
    req[FORM] = await readForm(ctx);
    req.body = req[FORM];
  }
  return req[FORM];
}

/** The parameters of a request to authorize or end_session: the query of a GET, the form of a POST (ENABLE_HTTP_POST_METHODS). */
export async function requestParams(ctx: KoaContextWithOIDC): Promise<querystring.ParsedUrlQuery> {
  if (isFormPost(ctx)) return querystring.parse(await formBody(ctx));
  return ctx.method === 'GET' ? ctx.query : {};
}

/** A parameter decodes to NUL only from a literal NUL or from %00. */
function containsNul(raw: string): boolean {
  return raw.includes('%00') || raw.includes('\u0000');
}

/** The endpoints a browser visits answer errors as a page; the others as RFC 6749 JSON. */
function renderRefusal(ctx: KoaContextWithOIDC, err: OAuthError): void {
  if (ctx.accepts('json', 'html') !== 'html') {
    renderOAuthError(ctx, err, false);
    return;
  }
  ctx.status = err.status;
  ctx.set(PAGE_HEADERS);
  ctx.type = 'html';
  const description = (err as { error_description?: string }).error_description;
  ctx.body = errorPage(err.error, description);
}

export const refuseNulParameters: EngineRule = async (ctx, next) => {
  try {
    if (containsNul(ctx.querystring) || (isFormPost(ctx) && containsNul(await formBody(ctx)))) {
      throw new errors.InvalidRequest('parameters must not contain NUL characters');
    }
  } catch (err) {
    if (!(err instanceof errors.OIDCProviderError)) throw err;
    renderRefusal(ctx, err);
    return;
  }
  await next();
};
