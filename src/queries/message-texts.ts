import type { Queryable } from '../storage/database.ts';
import { findMessageTexts } from '../storage/message-texts.ts';
import { readDetails, type WriteDetails } from '../storage/event-log.ts';
import { NotFound, PermissionDenied } from '../domain/errors.ts';
import { mayActInOrg, type Principal } from '../domain/roles.ts';
import { isMessageTextLanguage, isMessageTextType, type MessageTextLanguage, type MessageTexts, type MessageTextType } from '../domain/message-texts.ts';
import { messageTexts } from '../pages/mail-render.ts';

export interface MessageTextsView {
  customText: MessageTexts & { details: WriteDetails };
  /** True while the org has no texts of its own for this type and language. */
  isDefault: boolean;
}

/** The type and language of a path, each one the renderer knows (404 otherwise: no such text exists). */
export function messageTextKey(type: string, language: string): { type: MessageTextType; language: MessageTextLanguage } {
  if (!isMessageTextType(type)) throw new NotFound(`no message type "${type}"`);
  if (!isMessageTextLanguage(language)) throw new NotFound(`no message texts in the language "${language}"`);
  return { type, language };
}

export function assertMayWordMessages(actor: Principal, orgId: string): void {
  if (!mayActInOrg(actor, orgId, 'ORG_OWNER')) throw new PermissionDenied("the org's message texts require ORG_OWNER");
}

/** `GET /management/v1/text/message/{type}/{lang}`: the texts the org's users get, its own over the built-in ones. */
export async function getMessageTexts(db: Queryable, actor: Principal, orgId: string, type: string, language: string): Promise<MessageTextsView> {
  const key = { orgId, ...messageTextKey(type, language) };
  assertMayWordMessages(actor, orgId);
  const stored = await findMessageTexts(db, key);
  const { rows } = await db.query<{ sequence: string; creation_date: Date; change_date: Date }>(
    'SELECT sequence::text AS sequence, creation_date, change_date FROM orgs WHERE id = $1',
    [orgId],
  );
  if (!rows[0]) throw new NotFound('organization not found');
  const details = readDetails(stored ?? rows[0], orgId);
  return { customText: { ...messageTexts(key.type, key.language, stored?.texts), details }, isDefault: !stored };
}

/** The org's own texts of a message, as the renderer applies them (none: the built-in ones). */
export async function orgMessageTexts(db: Queryable, orgId: string, type: string, language: string): Promise<Partial<MessageTexts> | undefined> {
  return (await findMessageTexts(db, { orgId, type, language }))?.texts;
}
