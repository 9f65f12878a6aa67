import { createHash } from 'node:crypto';
import querystring from 'node:querystring';
import type Provider from 'oidc-provider';
import { errors, type Adapter } from 'oidc-provider';
import { DEVICE_CODE_GRANT } from '../domain/grant-types.ts';
import { renderOAuthError } from './oauth-errors.ts';
import type { AuthThrottle } from '../security/auth-throttle.ts';
import { tooManyUserCodesPage } from '../pages/device.ts';
import type { EngineRule } from './rule-dispatch.ts';

/** Seconds a device waits between two polls of the token endpoint (RFC 8628 3.2, its default). */
export const DEVICE_POLL_INTERVAL = 5;
/** How long a device code lives, and so its polling record. */
export const DEVICE_CODE_LIFETIME = 600;
/** The engine-record model of the polling records (Redis, or PostgreSQL without it). */
export const DEVICE_POLL_MODEL = 'DevicePoll';
// A client's timer and the network make a poll arrive a little early or late.
const EARLY_POLL_TOLERANCE_MS = 1000;

interface PollRecord {
  polledAt: number;
  interval: number;
}

/** The device authorization response names the polling interval (RFC 8628 3.2); the engine leaves it out. */
export const devicePollInterval: EngineRule = async (ctx, next) => {
  await next();
  const body = ctx.body as { device_code?: string } | undefined;
  if (ctx.status === 200 && body?.device_code) ctx.body = { ...body, interval: DEVICE_POLL_INTERVAL };
};

/**
 * RFC 8628 3.5: a device that polls faster than its interval gets
 * `slow_down`, and its interval grows by 5 seconds for that and every later
 * poll. The engine answers authorization_pending at any pace, so the time of
 * each pending poll is kept per device code in the engine's short-lived
 * store, where every node sees it. Runs after the token form was read
 * (client-request-rules.ts).
 */
export function pacedDevicePolling(polls: Adapter): EngineRule {
  return async (ctx, next) => {
    const raw = (ctx.req as { body?: unknown }).body;
    if (typeof raw !== 'string' || !raw.includes('device_code')) return next();
    const params = querystring.parse(raw);
    const code = params.device_code;
    if (params.grant_type !== DEVICE_CODE_GRANT || typeof code !== 'string' || code.length > 1000) return next();
    const id = createHash('sha256').update(code).digest('base64url');
    const last = (await polls.find(id)) as PollRecord | undefined;
    const now = Date.now();
    if (last && now - last.polledAt < last.interval * 1000 - EARLY_POLL_TOLERANCE_MS) {
      const interval = last.interval + 5;
      await polls.upsert(id, { polledAt: now, interval } satisfies PollRecord as never, DEVICE_CODE_LIFETIME);
      renderOAuthError(ctx as never, new errors.SlowDown(`poll at most every ${interval} seconds`), false);
      return;
    }
    await next();
    if ((ctx.body as { error?: string } | undefined)?.error === 'authorization_pending') {
      await polls.upsert(id, { polledAt: now, interval: last?.interval ?? DEVICE_POLL_INTERVAL } satisfies PollRecord as never, DEVICE_CODE_LIFETIME);
    }
  };
}

/**
 * The user-code form posted without the browser session it was rendered in
 * (cookies cleared, the session expired, a forged post): the engine fails
 * while rendering its error (it cannot give a session that was never stored
 * a new anti-forgery token), so the browser is sent to a fresh form instead.
 */
export const freshUserCodeForm: EngineRule = async (ctx, next) => {
  if (ctx.method !== 'POST') return next();
  const provider = ctx.app as unknown as Provider;
  const sessionId = ctx.cookies.get(provider.cookieName('session'));
  const session = sessionId && sessionId.length < 200 ? await provider.Session.find(sessionId) : undefined;
  if (session) return next();
  ctx.status = 303;
  ctx.redirect(ctx.path);
};

/** RFC 8628 3.2 / RFC 6749 5.2: an app without the device grant is `unauthorized_client`; the engine says invalid_request. */
export const deviceGrantNotAllowed: EngineRule = async (ctx, next) => {
  await next();
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (ctx.status === 400 && body?.error === 'invalid_request' && body.error_description === `${DEVICE_CODE_GRANT} is not allowed for this client`) {
    ctx.body = { ...body, error: 'unauthorized_client' };
  }
};

/**
 * A user code is a short secret: typing codes until one fits is guessing,
 * so a wrong code counts as a failed authentication of the address (the
 * throttle of docs/security.md), and a blocked address gets 429 before the
 * engine looks the code up.
 */
export function throttleUserCodes(throttle: AuthThrottle): EngineRule {
  return async (ctx, next) => {
    if (ctx.method !== 'POST') return next();
    const wait = throttle.retryAfterOf(ctx.req);
    if (wait !== undefined) return tooManyUserCodesPage(ctx, wait);
    await next();
    if (ctx.state.wrongUserCode) await throttle.failed(throttle.addressOf(ctx.req));
  };
}
