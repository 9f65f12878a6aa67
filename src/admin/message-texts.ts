import Router from '@koa/router';
import type { Context } from 'koa';
import type { Database } from '../storage/database.ts';
import type { Principal } from '../domain/roles.ts';
import type { FieldViolation } from '../domain/errors.ts';
import { MESSAGE_TEXT_FIELDS, MESSAGE_TEXT_LIMITS, type MessageTexts, SINGLE_LINE_FIELDS, unknownPlaceholders } from '../domain/message-texts.ts';
import { getMessageTexts, messageTextKey } from '../queries/message-texts.ts';
import { resetMessageTexts, setMessageTexts } from '../commands/message-texts.ts';
import { actingOrgId } from './org-context.ts';
import { validator } from './validate.ts';

/** Each field optional, at most its limit; one-line fields without line breaks or other control characters. */
const messageTextsSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: Object.fromEntries(
    MESSAGE_TEXT_FIELDS.map((field) => [
      field,
      SINGLE_LINE_FIELDS.includes(field)
        ? {
            type: 'string',
            maxLength: MESSAGE_TEXT_LIMITS[field],
            pattern: '^[^\\u0000-\\u001f\\u007f]*$',
            description: 'must be one line without control characters',
          }
        : {
            type: 'string',
            maxLength: MESSAGE_TEXT_LIMITS[field],
            pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$',
            description: 'must not contain control characters',
          },
    ]),
  ),
};

/** A placeholder the renderer does not know would reach the user as it is written. */
function knownPlaceholders(body: Partial<MessageTexts>): FieldViolation[] {
  return MESSAGE_TEXT_FIELDS.flatMap((field) => {
    const value = body[field];
    const unknown = typeof value === 'string' ? unknownPlaceholders(value) : [];
    return unknown.length
      ? [{ field, description: `unknown placeholder ${unknown[0]}; known: {{.Code}}, {{.URL}}, {{.UserName}}, {{.FirstName}}, {{.OrgName}}` }]
      : [];
  });
}

const parseTexts = validator<Partial<MessageTexts>>(messageTextsSchema, knownPlaceholders);
const principal = (ctx: Context) => ctx.state.principal as Principal;
const pathOf = (ctx: Context) => ({ type: ctx.params.type!, language: ctx.params.lang! });

/** An org's own message texts (docs/api/message-texts.md), ORG_OWNER of the acting org. */
export function messageTextRoutes(db: Database): Router {
  const router = new Router({ prefix: '/management/v1/text/message' });
  router.get('/:type/:lang', async (ctx) => {
    const { type, language } = pathOf(ctx);
    ctx.body = await getMessageTexts(db, principal(ctx), await actingOrgId(ctx, db), type, language);
  });
  router.put('/:type/:lang', async (ctx) => {
    // An unknown type or language is 404 whatever the body.
    messageTextKey(ctx.params.type!, ctx.params.lang!);
    const input = parseTexts(ctx.request.body ?? {});
    ctx.body = await setMessageTexts(db, principal(ctx), await actingOrgId(ctx, db), pathOf(ctx), input);
  });
  router.delete('/:type/:lang', async (ctx) => {
    ctx.body = await resetMessageTexts(db, principal(ctx), await actingOrgId(ctx, db), pathOf(ctx));
  });
  return router;
}
