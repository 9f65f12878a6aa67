import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mailLanguage, renderMail } from '../../src/pages/mail-render.ts';
import { MAIL_LANGUAGES, MAIL_TEXTS } from '../../src/pages/mail-texts.ts';
import { MESSAGE_TYPES } from '../../src/storage/outbox.ts';

const values = {
  Code: 'ABCD1234',
  URL: 'https://id.example.test/ui/login/password/init?userID=1&code=ABCD1234',
  UserName: 'ada@example.test',
  FirstName: 'Ada',
  OrgName: 'Example',
};

describe('mail texts', () => {
  it('exist for every message type in every language, each placeholder filled', () => {
    for (const language of MAIL_LANGUAGES) {
      for (const type of MESSAGE_TYPES) {
        const mail = renderMail(type, language, values);
        for (const part of [mail.subject, mail.text, mail.html]) assert.doesNotMatch(part, /\{\{/, `${language} ${type}`);
        assert.notEqual(mail.subject, '');
      }
    }
  });

  it('carry the code in both parts of the messages that have one', () => {
    for (const type of ['InitCode', 'VerifyEmail', 'PasswordReset', 'OtpEmail'] as const) {
      const mail = renderMail(type, 'en', values);
      assert.match(mail.text, /ABCD1234/);
      assert.match(mail.html, /ABCD1234/);
    }
    assert.doesNotMatch(renderMail('PasswordChanged', 'en', values).text, /ABCD1234/);
  });

  it('link the URL as a button when the message has one', () => {
    const mail = renderMail('PasswordReset', 'en', values);
    assert.match(mail.html, /<a href="https:\/\/id\.example\.test\/ui\/login\/password\/init\?userID=1&amp;code=ABCD1234"[^>]*>Reset password<\/a>/);
    assert.match(mail.text, /Reset password: https:\/\/id\.example\.test\/ui\/login\/password\/init\?userID=1&code=ABCD1234/);
    assert.doesNotMatch(renderMail('PasswordReset', 'en', { ...values, URL: undefined }).html, /<a /);
  });

  it('escape every value in the HTML part, and only there', () => {
    const hostile = { ...values, FirstName: '<script>alert(1)</script>', OrgName: '"Evil" & Co' };
    const mail = renderMail('InitCode', 'en', hostile);
    assert.doesNotMatch(mail.html, /<script>/);
    assert.match(mail.html, /Hello &lt;script&gt;alert\(1\)&lt;\/script&gt;,/);
    assert.match(mail.text, /Hello <script>alert\(1\)<\/script>,/);
    assert.equal(mail.subject, 'Set your password for "Evil" & Co');
  });

  it("speak the user's language, English otherwise", () => {
    assert.equal(renderMail('PasswordReset', 'de', values).subject, MAIL_TEXTS.de.PasswordReset.subject);
    assert.equal(mailLanguage('de-CH'), 'de');
    assert.equal(mailLanguage('DE'), 'de');
    assert.equal(mailLanguage('fr'), 'en');
    assert.equal(mailLanguage(undefined), 'en');
    assert.equal(renderMail('OtpEmail', 'fr', values).subject, 'Your sign-in code');
  });
});
