import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.ts';

const requestIds = new WeakMap<IncomingMessage, string>();
const refusals = new WeakMap<IncomingMessage, Refusal>();
const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_MESSAGE = 300;

/**
 * Why a request was refused, for its log line: the error code the caller
 * got (an OAuth `error`, or the API's gRPC code) and its message, plus the
 * names of the fields at fault. Only what the caller was told — never a
 * value it sent — so no secret reaches the log.
 */
export interface Refusal {
  code: string | number;
  message?: string;
  fields?: string[];
}

/** Records why `req` is answered with an error (the last word counts). */
export function noteRefusal(req: IncomingMessage, refusal: Refusal): void {
  const message = refusal.message === undefined ? undefined : String(refusal.message).slice(0, MAX_MESSAGE);
  refusals.set(req, { code: refusal.code, ...(message === undefined ? {} : { message }), ...(refusal.fields?.length ? { fields: refusal.fields } : {}) });
}

/** The id of a request, also for code that only sees the raw request (the engine). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  return requestIds.get(req);
}

/** The request's path without its query string (queries carry codes and tokens). */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Gives each request an id (a sane incoming X-Request-Id, or a new one),
 * echoes it, and writes one access log line when the response is finished,
 * whoever wrote it (our routes or the engine), with the reason of a 4xx. Works on the raw request so
 * that engine requests need no Koa context of ours.
 */
export function requestContext(log: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const logRequests = log.isLevelEnabled('info');
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    requestIds.set(req, requestId);
    res.setHeader('X-Request-Id', requestId);
    if (!logRequests) return;
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const status = res.statusCode;
      const refusal = status >= 400 && status < 500 ? refusals.get(req) : undefined;
      log.info({ requestId, method: req.method, path: pathOf(req), status, ms: Math.round(ms * 10) / 10, ...(refusal ? { refusal } : {}) }, 'request');
    });
  };
}
