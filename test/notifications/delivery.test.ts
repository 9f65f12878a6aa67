import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  deliverDueMessages,
  retryDelay,
  startNotificationWorker,
  type DeliveryOptions,
  type DeliveryOutcome,
} from '../../src/commands/deliver-notifications.ts';
import { beginWrite } from '../../src/storage/event-log.ts';
import { enqueueMessage } from '../../src/storage/outbox.ts';
import { smtpSender } from '../../src/outbound/mail-senders.ts';
import { parseSmtpUrl } from '../../src/outbound/smtp-settings.ts';
import { openTestDatabase, type TestDatabase } from '../support/stores.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { enqueue, memoryLogger, message, outboxRows } from './support.ts';

describe('the outbox worker, against a real SMTP server', () => {
  let store: TestDatabase;
  let sink: SmtpSink;
  let outcomes: DeliveryOutcome[];
  let logged: ReturnType<typeof memoryLogger>;

  before(async () => {
    store = await openTestDatabase();
    sink = await startSmtpSink();
  });
  after(async () => {
    await sink.stop();
    await store.cleanup();
  });
  beforeEach(async () => {
    await store.db.query('DELETE FROM notification_outbox');
    await sink.restart();
    sink.received.length = 0;
    sink.behaviour = () => 'accept';
    outcomes = [];
    logged = memoryLogger();
  });

  function options(overrides: Partial<DeliveryOptions> = {}): DeliveryOptions {
    return {
      db: store.db,
      log: logged.log,
      sender: async () => smtpSender({ ...parseSmtpUrl(sink.url('mailer:s3cret-pass')), senderAddress: 'noreply@example.test', senderName: 'Example' }),
      onDelivery: (outcome) => outcomes.push(outcome),
      pollMs: 50,
      retryForSeconds: 3600,
      firstDelaySeconds: 0.1,
      maxDelaySeconds: 0.4,
      ...overrides,
    };
  }

  it('sends a queued message, rendered, and keeps no code once it is sent', async () => {
    const [id] = await enqueue(store.db, message());
    assert.equal(await deliverDueMessages(options()), 1);
    const [mail] = await sink.waitFor(1);
    assert.equal(mail!.subject, 'Reset your password');
    assert.equal(mail!.to && !Array.isArray(mail!.to) ? mail!.to.text : '', 'ada@example.test');
    assert.equal(mail!.from?.text, '"Example" <noreply@example.test>');
    assert.match(mail!.text ?? '', /K7Q2M9X4/);
    assert.match(String(mail!.html), /K7Q2M9X4/);
    assert.deepEqual(sink.logins, ['mailer:s3cret-pass']);
    const [row] = await outboxRows(store.db);
    assert.deepEqual({ id: row!.id, state: row!.state, attempts: row!.attempts, values: row!.values }, { id, state: 'sent', attempts: 1, values: null });
    assert.deepEqual(outcomes, ['sent']);
    sink.logins.length = 0;
  });

  it('a message queued in a write that rolls back is never sent', async () => {
    await assert.rejects(
      store.db.transaction(async (tx) => {
        await enqueueMessage(await beginWrite(tx, null), message());
        throw new Error('the command failed');
      }),
      /the command failed/,
    );
    assert.equal(await deliverDueMessages(options()), 0);
    assert.deepEqual(await outboxRows(store.db), []);
  });

  it('every message arrives, none twice, when the SMTP server dies mid-delivery and comes back', async () => {
    const count = 8;
    await enqueue(store.db, ...Array.from({ length: count }, (_, i) => message({ values: { Code: `CODE000${i}`, FirstName: `User ${i}` } })));
    // The fourth mail kills the server while its data arrives.
    sink.behaviour = (index) => (index === 3 ? 'die' : 'accept');
    const worker = startNotificationWorker(options());
    try {
      while (sink.running) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.ok(sink.received.length < count, 'the server died before everything arrived');
      await sink.restart();
      await sink.waitFor(count);
      // A moment for any duplicate to show.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await worker.stop();
    }
    const codes = sink.received.map((mail) => /CODE000\d/.exec(mail.text ?? '')?.[0]).sort();
    assert.deepEqual(
      codes,
      Array.from({ length: count }, (_, i) => `CODE000${i}`),
    );
    const rows = await outboxRows(store.db);
    assert.ok(rows.every((row) => row.state === 'sent' && row.values === null));
    assert.ok(outcomes.includes('retried'));
    assert.equal(outcomes.filter((o) => o === 'sent').length, count);
  });

  it('two workers sending at once send each message once (one claim per row)', async () => {
    const count = 30;
    await enqueue(store.db, ...Array.from({ length: count }, (_, i) => message({ values: { Code: `PAR${String(i).padStart(3, '0')}` } })));
    const [a, b] = await Promise.all([deliverDueMessages(options()), deliverDueMessages(options())]);
    assert.equal(a + b, count);
    await sink.waitFor(count);
    assert.equal(new Set(sink.received.map((mail) => /PAR\d{3}/.exec(mail.text ?? '')?.[0])).size, count);
    assert.equal(sink.received.length, count);
  });

  it('retries a refused message with growing delays, then gives up: notification.failed, a log line without the code, nothing kept', async () => {
    sink.behaviour = () => ({ refuse: '550 mailbox unavailable' });
    const [id] = await enqueue(store.db, message());
    const worker = startNotificationWorker(options({ retryForSeconds: 1.5 }));
    try {
      const deadline = Date.now() + 20_000;
      while ((await outboxRows(store.db))[0]!.state === 'pending') {
        assert.ok(Date.now() < deadline, 'given up in time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await worker.stop();
    }
    const [row] = await outboxRows(store.db);
    assert.equal(row!.state, 'failed');
    assert.equal(row!.values, null);
    assert.match(row!.last_error ?? '', /550 mailbox unavailable/);
    assert.ok(row!.attempts >= 3, `retried (${row!.attempts} attempts)`);
    assert.equal(outcomes.at(-1), 'failed');
    assert.equal(outcomes.filter((o) => o === 'retried').length, row!.attempts - 1);
    const { rows: events } = await store.db.query<{ aggregate_id: string; resource_owner: string; payload: Record<string, unknown> }>(
      `SELECT aggregate_id, resource_owner, payload FROM events WHERE event_type = 'notification.failed'`,
    );
    assert.equal(events.length, 1);
    assert.deepEqual(
      { user: events[0]!.aggregate_id, org: events[0]!.resource_owner, messageId: events[0]!.payload.messageId, type: events[0]!.payload.messageType },
      { user: 'user-ada', org: 'org-example', messageId: id, type: 'PasswordReset' },
    );
    assert.match(String(events[0]!.payload.reason), /550 mailbox unavailable/);
    assert.match(logged.text(), /notification given up/);
    assert.doesNotMatch(logged.text(), /K7Q2M9X4|s3cret-pass/);
    assert.deepEqual(sink.received, []);
  });

  it('backs off exponentially up to its ceiling', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((attempts) => retryDelay(attempts, 10, 600)),
      [10, 20, 40, 80, 160, 320, 600, 600],
    );
  });

  it('refuses an SMTP host that resolves to a link-local or metadata address, without connecting', async () => {
    await enqueue(store.db, message());
    await deliverDueMessages(
      options({ sender: async () => smtpSender({ host: '169.254.169.254', port: sink.port, tls: 'none', senderAddress: 'noreply@example.test' }) }),
    );
    const [row] = await outboxRows(store.db);
    assert.equal(row!.state, 'pending');
    assert.match(row!.last_error ?? '', /169\.254\.169\.254 is refused: link-local, metadata or multicast address/);
    assert.deepEqual(outcomes, ['retried']);
  });
});
