import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { loadConfig } from '../../config/load.ts';
import { startServer } from '../../src/server.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { call } from '../support/api.ts';
import { prepareEnvironment, testServer, type TestServer } from '../support/server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { enqueue, memoryLogger, message, outboxRows } from './support.ts';

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('mail delivery by the running server', () => {
  describe('without an SMTP server', () => {
    let server: TestServer;
    before(async () => {
      server = await testServer({ captureLog: true });
    });
    after(() => server.stop());

    it('writes each mail to DATA_DIR/outbox as a private .eml file and names it in the log', async () => {
      await enqueue(
        server.running.db,
        message({ type: 'InitCode', userId: 'user-ada', language: 'de', values: { Code: 'INIT7777', FirstName: '<Ada>', OrgName: 'Example' } }),
      );
      const folder = join(server.dataDir, 'outbox');
      const [name] = await until(
        () => {
          try {
            return readdirSync(folder);
          } catch {
            return [];
          }
        },
        (names) => names.length === 1,
      );
      assert.match(name!, /^\d{8}T\d{9}Z-InitCode-user-ada\.eml$/);
      const file = join(folder, name!);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(folder).mode & 0o777, 0o700);
      const mail = await simpleParser(readFileSync(file));
      assert.equal(mail.subject, 'Passwort für Example festlegen');
      assert.match(mail.text ?? '', /Hallo <Ada>,/);
      assert.match(String(mail.html), /Hallo &lt;Ada&gt;,/);
      assert.match(mail.text ?? '', /INIT7777/);
      assert.equal(mail.from?.text, 'noreply@example.test');
      const line = await until(
        () =>
          server
            .logText()
            .split('\n')
            .find((l) => l.includes('outbox folder')),
        (found) => found !== undefined,
      );
      assert.equal(JSON.parse(line!).file, file);
      assert.doesNotMatch(server.logText(), /INIT7777/);
      const [row] = await outboxRows(server.running.db);
      assert.deepEqual([row!.state, row!.values], ['sent', null]);
    });

    it('counts deliveries by outcome in /metrics', async () => {
      const metrics = await call(`${server.url}/metrics`);
      assert.match(metrics.text, /portcullis_notification_deliveries_total\{outcome="sent"\} 1/);
    });
  });

  describe('through SMTP_URL', () => {
    let sink: SmtpSink;
    before(async () => {
      sink = await startSmtpSink();
    });
    after(() => sink.stop());

    it('a message committed while no server runs goes out after the next start on the same stores', async () => {
      const logged = memoryLogger();
      const environment = await prepareEnvironment({
        INSTANCE_DOMAIN: 'example.test',
        SHUTDOWN_TIMEOUT: '2',
        SMTP_URL: sink.url('mailer:pa%24%24word'),
        SMTP_FROM: 'Example IdP <id@example.test>',
      });
      try {
        const config = loadConfig(environment.env);
        const first = await startServer(config, logged.log);
        await first.stop();
        // The commit of the event and its message, with no worker running anywhere.
        const db = await openDatabase(config);
        await enqueue(db, message({ values: { Code: 'AFTER123', FirstName: 'Ada' } }));
        await db.close();
        assert.deepEqual(sink.received, []);

        const second = await startServer(config, logged.log);
        try {
          const [mail] = await sink.waitFor(1);
          assert.match(mail!.text ?? '', /AFTER123/);
          assert.equal(mail!.from?.text, '"Example IdP" <id@example.test>');
          assert.deepEqual(sink.logins, ['mailer:pa$$word']);
          await until(
            () => outboxRows(second.db),
            (rows) => rows[0]?.state === 'sent',
          );
        } finally {
          await second.stop();
        }
        assert.equal(sink.received.length, 1);
        assert.doesNotMatch(logged.text(), /pa%24%24word|pa\$\$word|AFTER123/);
      } finally {
        await environment.cleanup();
      }
    });
  });
});
