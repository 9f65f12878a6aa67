import Router from '@koa/router';
import type { Principal } from '../domain/roles.ts';
import type { SmtpSettings } from '../outbound/smtp-settings.ts';
import { removeSmtpSettings, sendTestMail, setSmtpSettings, type SmtpSettingsInput } from '../commands/smtp-settings.ts';
import { getSmtpSettings } from '../queries/smtp-settings.ts';
import type { Database } from '../storage/database.ts';
import { smtpSettingsSchema, smtpTestSchema } from './smtp-schemas.ts';
import { validator } from './validate.ts';

const parseSettings = validator<SmtpSettingsInput>(smtpSettingsSchema);
const parseTest = validator<{ receiverAddress: string }>(smtpTestSchema);

export interface SmtpAdmin {
  /** Seals the stored password. */
  sealingKey: Buffer;
  /** SMTP_URL's server, used when the API sets none. */
  fromEnvironment: SmtpSettings | undefined;
}

/** `GET`, `PUT`, `DELETE /admin/v1/smtp` and `POST /admin/v1/smtp/_test` (docs/api/notifications.md). */
export function smtpRoutes(db: Database, { sealingKey, fromEnvironment }: SmtpAdmin): Router {
  const router = new Router();
  router.get('/admin/v1/smtp', async (ctx) => {
    ctx.body = await getSmtpSettings(db, ctx.state.principal as Principal);
  });
  router.put('/admin/v1/smtp', async (ctx) => {
    const input = parseSettings(ctx.request.body ?? {});
    ctx.body = await setSmtpSettings(db, sealingKey, ctx.state.principal as Principal, input);
  });
  router.delete('/admin/v1/smtp', async (ctx) => {
    ctx.body = await removeSmtpSettings(db, ctx.state.principal as Principal);
  });
  router.post('/admin/v1/smtp/_test', async (ctx) => {
    const { receiverAddress } = parseTest(ctx.request.body ?? {});
    ctx.body = await sendTestMail(db, sealingKey, fromEnvironment, ctx.state.principal as Principal, receiverAddress);
  });
  return router;
}
