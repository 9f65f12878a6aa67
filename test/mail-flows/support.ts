import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ParsedMail } from 'mailparser';
import type { Page } from 'playwright-core';
import type { Database } from '../../src/storage/database.ts';
import { ROOT } from '../support/server.ts';
import type { SmtpSink } from '../support/smtp-sink.ts';

// What the self-service tests share: reading codes and links out of the
// mails the test's SMTP server received, the outbox as the database holds
// it, and screenshots for a person to look at.

const SHOTS = join(ROOT, 'test-results');

/** Saves a full-page screenshot under test-results/ (ignored by git). */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

export interface Mailbox {
  /** Waits for the `n`th mail (1-based) to `address` and answers it. */
  nth(address: string, n: number): Promise<ParsedMail>;
  /** The mails to `address` received so far. */
  of(address: string): ParsedMail[];
}

export function mailbox(sink: SmtpSink): Mailbox {
  const of = (address: string) => sink.received.filter((mail) => (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.text === address));
  return {
    of,
    async nth(address, n) {
      const deadline = Date.now() + 30_000;
      while (of(address).length < n) {
        if (Date.now() > deadline)
          throw new Error(
            `mail ${n} to ${address} did not arrive; got ${of(address)
              .map((m) => m.subject)
              .join(', ')}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return of(address)[n - 1]!;
    },
  };
}

/** The typed code a mail carries (10 characters of A–Z, 0–9). */
export function typedCode(mail: ParsedMail): string {
  const match = /: ([A-Z0-9]{10})\b/.exec(mail.text ?? '');
  assert.ok(match, `a code in: ${mail.text}`);
  return match[1]!;
}

/** The link a mail carries. */
export function linkOf(mail: ParsedMail): URL {
  const match = /(https?:\/\/\S+)/.exec(mail.text ?? '');
  assert.ok(match, `a link in: ${mail.text}`);
  return new URL(match[1]!);
}

/** The messages queued for a user, oldest first, as the outbox holds them. */
export async function queuedTypes(db: Database, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ message_type: string }>('SELECT message_type FROM notification_outbox WHERE user_id = $1 ORDER BY id', [userId]);
  return rows.map((row) => row.message_type);
}

/** The text a person reads on the page (its main part). */
export async function mainText(page: Page): Promise<string> {
  return ((await page.textContent('main')) ?? '').replace(/\s+/g, ' ').trim();
}
