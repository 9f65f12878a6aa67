import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { freePort, testServer, type TestServer } from '../support/server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { enqueue, message, outboxRows } from './support.ts';

// docs/api/notifications.md: the instance's SMTP server, its permissions,
// validation, the write-only password and the test mail.

let server: TestServer;
let sink: SmtpSink;
let instanceId: string;
/** PAT of a machine user holding ORG_OWNER of the first org, not IAM_OWNER. */
let orgOwnerPat: string;

const PASSWORD = 'Smtp-Secret-4711';

function settings(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    senderAddress: 'id@example.test',
    senderName: 'Example IdP',
    host: '127.0.0.1',
    port: sink.port,
    user: 'mailer',
    password: PASSWORD,
    tls: 'TLS_MODE_NONE',
    ...overrides,
  };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, 'timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('/admin/v1/smtp', () => {
  before(async () => {
    sink = await startSmtpSink();
    server = await testServer({ captureLog: true });
    const { rows } = await server.running.db.query<{ id: string }>('SELECT id FROM instance');
    instanceId = rows[0]!.id;
    const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'org-owner', name: 'org-owner' } });
    assert.equal(machine.status, 200, machine.text);
    const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles: ['ORG_OWNER'] } });
    assert.equal(member.status, 200, member.text);
    orgOwnerPat = (await server.api('POST', `/management/v1/users/${machine.body.userId}/pats`)).body.token;
  });
  after(async () => {
    await server.stop();
    await sink.stop();
  });

  it('answers {} while none is set; DELETE is 404 and _test says none is set', async () => {
    const res = await server.api('GET', '/admin/v1/smtp');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    assertError(await server.api('DELETE', '/admin/v1/smtp'), 404);
    const test = await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'ada@example.test' } });
    assert.equal(test.status, 400);
    assert.match(test.body.message, /no SMTP server is set/);
  });

  it('refuses bad bodies naming every bad field, and saves nothing', async () => {
    const put = (body: unknown) => server.api('PUT', '/admin/v1/smtp', { body });
    assertInvalid(await put(settings({ extra: 1 })), ['extra']);
    assertInvalid(await put(settings({ port: 0 })), ['port']);
    assertInvalid(await put(settings({ port: 65536 })), ['port']);
    assertInvalid(await put(settings({ port: '25' })), ['port']);
    assertInvalid(await put(settings({ tls: 'TLS' })), ['tls']);
    assertInvalid(await put(settings({ host: undefined })), ['host']);
    assertInvalid(await put(settings({ host: 'mail.example.com/../x' })), ['host']);
    assertInvalid(await put(settings({ host: 'a'.repeat(254) })), ['host']);
    assertInvalid(await put(settings({ senderAddress: 'not an address' })), ['senderAddress']);
    assertInvalid(await put(settings({ senderName: 'Evil\r\nBcc: x@example.test' })), ['senderName']);
    assertInvalid(await put(settings({ password: 'x'.repeat(1025) })), ['password']);
    assertInvalid(await put({ port: -1, tls: 'no', extra: true }), ['senderAddress', 'host', 'port', 'tls', 'extra'], { atLeast: true });
    assertInvalid(await put([]), [], { atLeast: true });
    assert.deepEqual((await server.api('GET', '/admin/v1/smtp')).body, {});
  });

  it('needs IAM_OWNER: 403 for an ORG_OWNER, 401 without a token', async () => {
    for (const [method, path, body] of [
      ['GET', '/admin/v1/smtp', undefined],
      ['PUT', '/admin/v1/smtp', settings()],
      ['DELETE', '/admin/v1/smtp', undefined],
      ['POST', '/admin/v1/smtp/_test', { receiverAddress: 'ada@example.test' }],
    ] as const) {
      assertError(await server.api(method, path, { body, token: orgOwnerPat }), 403);
      assertError(await server.api(method, path, { body, token: null }), 401);
    }
    assert.deepEqual((await server.api('GET', '/admin/v1/smtp')).body, {});
    assert.deepEqual(sink.received, []);
  });

  it('sets the server; GET never shows the password, which is sealed at rest and in no event', async () => {
    const res = await server.api('PUT', '/admin/v1/smtp', { body: settings() });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, instanceId);
    const read = await server.api('GET', '/admin/v1/smtp');
    assert.equal(read.status, 200);
    const { details, ...shown } = read.body;
    assertDetails(details, instanceId);
    assert.equal(details.sequence, res.body.details.sequence);
    assert.deepEqual(shown, {
      senderAddress: 'id@example.test',
      senderName: 'Example IdP',
      host: '127.0.0.1',
      port: sink.port,
      user: 'mailer',
      tls: 'TLS_MODE_NONE',
      hasPassword: true,
    });
    assert.doesNotMatch(read.text, new RegExp(PASSWORD));
    const { rows } = await server.running.db.query<{ password_sealed: Buffer }>('SELECT password_sealed FROM smtp_settings');
    assert.ok(!Buffer.from(rows[0]!.password_sealed).includes(PASSWORD));
    const events = await server.running.db.query<{ payload: unknown }>(`SELECT payload FROM events WHERE event_type LIKE 'instance.smtp.%'`);
    assert.equal(events.rows.length, 1);
    assert.doesNotMatch(JSON.stringify(events.rows), new RegExp(PASSWORD));
  });

  it('sends a test mail through it', async () => {
    const res = await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'ada@example.test' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {});
    const [mail] = await sink.waitFor(1);
    assert.equal(mail!.subject, 'Portcullis test mail');
    assert.equal(mail!.from?.text, '"Example IdP" <id@example.test>');
    assert.deepEqual(sink.logins, [`mailer:${PASSWORD}`]);
  });

  it("answers the server's refusal, or the connection's failure, as a 400 with its text", async () => {
    sink.behaviour = () => ({ refuse: '550 5.1.1 mailbox unknown here' });
    try {
      const refused = await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'nobody@example.test' } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.code, 3);
      assert.match(refused.body.message, /550 5\.1\.1 mailbox unknown here/);
      assert.doesNotMatch(refused.text, new RegExp(PASSWORD));
    } finally {
      sink.behaviour = () => 'accept';
    }
    const closed = await freePort();
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: settings({ port: closed }) })).status, 200);
    const unreachable = await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'ada@example.test' } });
    assert.equal(unreachable.status, 400);
    assert.match(unreachable.body.message, /ECONNREFUSED/);
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: settings({ host: '169.254.169.254' }) })).status, 200);
    const metadata = await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'ada@example.test' } });
    assert.equal(metadata.status, 400);
    assert.match(metadata.body.message, /169\.254\.169\.254 is refused: link-local, metadata or multicast address/);
    for (const body of [{}, { receiverAddress: 'not an address' }, { receiverAddress: 'ada@example.test', extra: 1 }]) {
      const res = await server.api('POST', '/admin/v1/smtp/_test', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
    }
  });

  it('keeps the password when it is left out for the same host and user, never for another host', async () => {
    sink.logins.length = 0;
    sink.received.length = 0;
    const { password: _, ...withoutPassword } = settings();
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: settings() })).status, 200);
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: withoutPassword })).status, 200);
    assert.equal((await server.api('POST', '/admin/v1/smtp/_test', { body: { receiverAddress: 'ada@example.test' } })).status, 200);
    assert.deepEqual(sink.logins, [`mailer:${PASSWORD}`]);
    assert.equal((await server.api('GET', '/admin/v1/smtp')).body.hasPassword, true);
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: { ...withoutPassword, host: 'localhost' } })).status, 200);
    const { rows } = await server.running.db.query<{ password_sealed: Buffer | null }>('SELECT password_sealed FROM smtp_settings');
    assert.equal(rows[0]!.password_sealed, null);
    assert.equal((await server.api('GET', '/admin/v1/smtp')).body.hasPassword, false, 'GET says the password went');
  });

  it('is what the worker sends queued messages through; after DELETE they go to the outbox folder again', async () => {
    sink.received.length = 0;
    assert.equal((await server.api('PUT', '/admin/v1/smtp', { body: settings() })).status, 200);
    await enqueue(server.running.db, message({ values: { Code: 'VIAAPI01' } }));
    const [mail] = await sink.waitFor(1);
    assert.match(mail!.text ?? '', /VIAAPI01/);

    const removed = await server.api('DELETE', '/admin/v1/smtp');
    assert.equal(removed.status, 200, removed.text);
    assertDetails(removed.body.details, instanceId);
    assert.deepEqual((await server.api('GET', '/admin/v1/smtp')).body, {});
    await enqueue(server.running.db, message({ type: 'OtpEmail', userId: 'user-bob', values: { Code: 'TOFILE01' } }));
    const folder = join(server.dataDir, 'outbox');
    await until(
      async () => (existsSync(folder) ? readdirSync(folder) : []),
      (names) => names.some((name) => name.endsWith('-OtpEmail-user-bob.eml')),
    );
    assert.equal(sink.received.length, 1);
    // The file is written before the row is marked sent.
    await until(
      () => outboxRows(server.running.db),
      (rows) => rows.every((row) => row.state === 'sent'),
    );
    assert.doesNotMatch(server.logText(), new RegExp(`${PASSWORD}|VIAAPI01|TOFILE01`));
  });
});
