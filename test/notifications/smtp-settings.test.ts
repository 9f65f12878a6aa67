import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../config/load.ts';
import { parseSender, parseSmtpUrl } from '../../src/outbound/smtp-settings.ts';

describe('SMTP_URL and SMTP_FROM', () => {
  it('read the server, its TLS mode and its login from the URL', () => {
    assert.deepEqual(parseSmtpUrl('smtp://mailer:p%40ss@mail.example.com'), {
      host: 'mail.example.com',
      port: 587,
      tls: 'starttls',
      user: 'mailer',
      password: 'p@ss',
    });
    assert.deepEqual(parseSmtpUrl('smtps://mail.example.com'), { host: 'mail.example.com', port: 465, tls: 'implicit' });
    assert.deepEqual(parseSmtpUrl('smtp://127.0.0.1:2525?tls=none'), { host: '127.0.0.1', port: 2525, tls: 'none' });
    assert.deepEqual(parseSmtpUrl('smtp://[::1]:25?tls=none'), { host: '::1', port: 25, tls: 'none' });
  });

  it('read the sender with or without a name', () => {
    assert.deepEqual(parseSender('noreply@example.com'), { senderAddress: 'noreply@example.com' });
    assert.deepEqual(parseSender('Example IdP <noreply@example.com>'), { senderAddress: 'noreply@example.com', senderName: 'Example IdP' });
  });

  it('default to the outbox folder and a sender at the instance domain', () => {
    const config = loadConfig({ INSTANCE_DOMAIN: 'example.test' });
    assert.equal(config.smtp, undefined);
    assert.deepEqual(config.mailFrom, { senderAddress: 'noreply@example.test' });
    assert.equal('smtpUrl' in config, false);
  });

  for (const [value, reason] of [
    ['http://mail.example.com', /must start with smtp:\/\/ or smtps:\/\//],
    ['smtp://', /is not a valid URL|names no host/],
    ['not a url', /is not a valid URL/],
    ['smtp://mail.example.com:99999', /is not a valid URL/],
    ['smtp://mail.example.com/path', /must not have a path/],
    ['smtp://mail.example.com?secure=false', /takes no option but tls=none/],
    ['smtps://mail.example.com?tls=none', /tls=none only with smtp:\/\//],
    ['smtp://mail.example.com?tls=none&tls=none', /takes no option but tls=none/],
    ['smtp://:secret-pw@mail.example.com', /password without a user/],
    ['smtp://user:%E0%A4%A@mail.example.com', /badly encoded/],
  ] as const) {
    it(`stop the start on SMTP_URL=${value}, without quoting it`, () => {
      assert.throws(
        () => loadConfig({ SMTP_URL: value }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /^SMTP_URL /);
          assert.match(err.message, reason);
          assert.doesNotMatch(err.message, /secret-pw|E0%A4/);
          return true;
        },
      );
    });
  }

  for (const value of ['nobody', 'Name <not-an-address>', 'a@b c', 'Evil\r\nBcc: x@y <a@b>']) {
    it(`stop the start on SMTP_FROM=${JSON.stringify(value)}`, () => {
      assert.throws(
        () => loadConfig({ SMTP_FROM: value }),
        (err: Error) => err instanceof ConfigError && /^SMTP_FROM must be an address/.test(err.message),
      );
    });
  }
});
