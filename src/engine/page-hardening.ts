import { PAGE_ASSETS, PAGE_HEADERS } from '../pages/layout.ts';
import type { EngineRule } from './rule-dispatch.ts';

// The engine's own self-submitting page (response_mode=form_post, and
// end_session without a session) carries this inline script.
const ENGINE_INLINE_SUBMIT = /<script>[^<]*document\.forms\[0\]\.submit\(\)[^<]*<\/script>/;

/**
 * Every HTML answer of the engine gets the page headers, and the engine's
 * inline auto-submit script becomes our served one, which the policy allows.
 * Only the browser endpoints (authorization and its resume, end_session, its
 * confirmation and success page) answer HTML, so the rule runs on those alone.
 */
export const hardenEnginePages: EngineRule = async (ctx, next) => {
  await next();
  if (!ctx.response.is('html')) return;
  ctx.set(PAGE_HEADERS);
  if (typeof ctx.body === 'string') ctx.body = ctx.body.replace(ENGINE_INLINE_SUBMIT, `<script src="${PAGE_ASSETS.autoSubmit.path}"></script>`);
};
