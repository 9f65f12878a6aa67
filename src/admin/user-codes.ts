import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import { resendInitialization, resetPasswordByAdmin, type AdminResetInput } from '../commands/password-codes.ts';
import { changeEmailByAdmin, resendEmailVerification, type EmailInput } from '../commands/email-verification.ts';
import { changePhoneByAdmin, resendPhoneVerification, type PhoneInput } from '../commands/phone-verification.ts';
import type { CodeSettings } from '../commands/verification-codes.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';
import { emptySchema, phoneSchema } from './user-schemas.ts';
import { emailSchema, oneDelivery, passwordResetSchema } from './user-code-schemas.ts';

const parseReset = validator<AdminResetInput>(passwordResetSchema, oneDelivery);
const parseEmail = validator<EmailInput>(emailSchema);
const parsePhone = validator<PhoneInput>(phoneSchema);
const parseEmpty = validator<Record<string, never>>(emptySchema);

const principal = (ctx: Context) => ctx.state.principal as Principal;

/**
 * The calls of a user's invitation, email and phone verification and
 * password reset (docs/api/users.md): each acts on the user's security
 * state, so the caller holds every role the user holds. `announce` tells
 * the caches of a changed email or phone.
 */
export function userCodeRoutes(db: Database, codes: CodeSettings, announce: () => void): Router {
  const deps = { db, codes, announce };
  const router = new Router({ prefix: '/management/v1/users' });

  router.post('/:userId/password/_reset', async (ctx) => {
    const input = parseReset(ctx.request.body);
    ctx.body = await resetPasswordByAdmin(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.post('/:userId/_resend_initialization', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await resendInitialization(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.post('/:userId/email/_resend_verification', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await resendEmailVerification(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.put('/:userId/email', async (ctx) => {
    const input = parseEmail(ctx.request.body);
    ctx.body = await changeEmailByAdmin(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  router.post('/:userId/phone/_resend_verification', async (ctx) => {
    parseEmpty(ctx.request.body ?? {});
    ctx.body = await resendPhoneVerification(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!);
  });
  router.put('/:userId/phone', async (ctx) => {
    const input = parsePhone(ctx.request.body);
    ctx.body = await changePhoneByAdmin(deps, principal(ctx), await actingOrgId(ctx, db), ctx.params.userId!, input);
  });
  return router;
}
