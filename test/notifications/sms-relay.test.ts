import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiClient } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { freePort, testServer, type TestServer } from '../support/server.ts';
import { signatureHeader, signatureValid } from '../../src/security/webhook-signature.ts';
import { enqueue, message } from './support.ts';

// SMS over the HTTP relay (docs/api/sms.md): the admin API, and SMS the
// outbox worker POSTs to a receiver in this test that checks the signature
// the way docs/api/sms.md tells a relay to.

interface Received {
  body: string;
  signature: string;
  valid: boolean;
}

/** An HTTP receiver on 127.0.0.1 that checks each request's signature with `signingKey()` and answers `status()`. */
function receiver(port: number, signingKey: () => string, status: () => number) {
  const received: Received[] = [];
  let server: Server | undefined;
  return {
    received,
    url: `http://127.0.0.1:${port}/sms`,
    async start() {
      server = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          const signature = String(req.headers['portcullis-signature'] ?? '');
          // Recomputed here from the documented format, not with the service's own code.
          const [, t = '', v1 = ''] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) ?? [];
          const expected = createHmac('sha256', signingKey()).update(`${t}.${body}`).digest('hex');
          received.push({ body, signature, valid: v1 === expected && Math.abs(Date.now() / 1000 - Number(t)) < 300 });
          res.writeHead(status()).end();
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      assert.equal((server.address() as AddressInfo).port, port);
    },
    stop: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}

describe('SMS over the HTTP relay', () => {
  let server: TestServer;
  let orgId: string;
  let signingKey = '';
  let relayStatus = 200;
  let relay: ReturnType<typeof receiver>;

  async function outboxRow(id: string): Promise<{ state: string; attempts: number; last_error: string | null }> {
    const { rows } = await server.running.db.query<{ state: string; attempts: number; last_error: string | null }>(
      'SELECT state, attempts, last_error FROM notification_outbox WHERE id = $1',
      [id],
    );
    return rows[0]!;
  }

  /** Polls the outbox until `done` holds for the message (the worker looks every second). */
  async function until(id: string, done: (row: { state: string; attempts: number; last_error: string | null }) => boolean) {
    for (let i = 0; i < 300; i++) {
      const row = await outboxRow(id);
      if (done(row)) return row;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`message ${id} never got there: ${JSON.stringify(await outboxRow(id))}`);
  }

  /** The retry is due now rather than after the backoff. */
  const retryNow = (id: string) => server.running.db.query('UPDATE notification_outbox SET next_attempt_at = now() WHERE id = $1', [id]);

  before(async () => {
    server = await testServer();
    relay = receiver(
      await freePort(),
      () => signingKey,
      () => relayStatus,
    );
    const setup = await server.api('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: { userName: 'o', profile: { firstName: 'O', lastName: 'O' }, email: { email: 'o@acme.example.test' } },
      },
    });
    orgId = setup.body.orgId;
  });
  after(async () => {
    await relay?.stop();
    await server?.stop();
  });

  it('signs with the documented header, and checks it', () => {
    const at = new Date('2026-11-27T06:00:00Z');
    const header = signatureHeader('key', '{"a":1}', at);
    const t = at.getTime() / 1000;
    assert.equal(header, `t=${t},v1=${createHmac('sha256', 'key').update(`${t}.{"a":1}`).digest('hex')}`);
    assert.equal(signatureValid('key', header, '{"a":1}', 300, at), true);
    assert.equal(signatureValid('key', header, '{"a":2}', 300, at), false, 'another body');
    assert.equal(signatureValid('other', header, '{"a":1}', 300, at), false, 'another key');
    assert.equal(signatureValid('key', header, '{"a":1}', 300, new Date(at.getTime() + 301_000)), false, 'too old');
    assert.notEqual(signatureHeader('key', 'b', at), signatureHeader('key', 'b', new Date(at.getTime() + 1000)), 'each attempt its own time');
  });

  it('GET is {} until a relay is set; bad endpoints are 400 and nothing is stored', async () => {
    const got = await server.api('GET', '/admin/v1/sms/http');
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body, {});
    const bad: unknown[] = [
      { endpoint: 'not a url' },
      { endpoint: 'ftp://relay.example.test/sms' },
      { endpoint: 'https://user:pass@relay.example.test/sms' },
      { endpoint: 'https://relay.example.test/sms#frag' },
      { endpoint: 'relay.example.test/sms' },
      { endpoint: `https://relay.example.test/${'a'.repeat(2000)}` },
      { endpoint: 'https://relay.example.test/\u0000' },
      { endpoint: '' },
      { endpoint: 42 },
      { endpoint: ['https://relay.example.test/sms'] },
    ];
    for (const body of bad)
      assertInvalid(await server.api('PUT', '/admin/v1/sms/http', { body }), ['endpoint'], { atLeast: true, what: JSON.stringify(body).slice(0, 60) });
    assertInvalid(await server.api('PUT', '/admin/v1/sms/http', { body: {} }), ['endpoint']);
    assertInvalid(await server.api('PUT', '/admin/v1/sms/http', { body: { endpoint: relay.url, extra: 1 } }), ['extra']);
    assert.equal((await server.api('PUT', '/admin/v1/sms/http', { raw: '{"endpoint":' })).status, 400);
    assert.deepEqual((await server.api('GET', '/admin/v1/sms/http')).body, {});
    assertError(await server.api('DELETE', '/admin/v1/sms/http'), 404);
  });

  it('only IAM_OWNER; the first PUT answers the signing key once, sealed at rest and in no event', async () => {
    const bot = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'owner', name: 'owner' }, orgId });
    await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: bot.body.userId, roles: ['ORG_OWNER'] }, orgId });
    const pat = await server.api('POST', `/management/v1/users/${bot.body.userId}/pats`, { orgId });
    const orgOwner = apiClient(server.url, pat.body.token, { strictJson: true });
    assertError(await orgOwner('PUT', '/admin/v1/sms/http', { body: { endpoint: relay.url } }), 403);
    assertError(await orgOwner('GET', '/admin/v1/sms/http'), 403);

    const first = await server.api('PUT', '/admin/v1/sms/http', { body: { endpoint: 'https://relay.example.test/sms' } });
    assert.equal(first.status, 200, first.text);
    assert.match(first.body.signingKey, /^[A-Za-z0-9_-]{43}$/);
    signingKey = first.body.signingKey;
    const again = await server.api('PUT', '/admin/v1/sms/http', { body: { endpoint: relay.url } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.signingKey, undefined, 'the key is answered once');
    const got = await server.api('GET', '/admin/v1/sms/http');
    assert.equal(got.body.endpoint, relay.url);
    assertDetails(got.body.details, (await server.running.db.query<{ id: string }>('SELECT id FROM instance')).rows[0]!.id);
    assert.ok(!got.text.includes(signingKey));
    const { rows } = await server.running.db.query<{ sealed: Uint8Array }>('SELECT signing_key_sealed AS sealed FROM sms_relay_settings');
    assert.ok(!Buffer.from(rows[0]!.sealed).includes(Buffer.from(signingKey)), 'sealed at rest');
    const events = await server.running.db.query<{ payload: unknown }>("SELECT payload FROM events WHERE event_type LIKE 'instance.sms.%'");
    assert.equal(events.rows.length, 2);
    assert.ok(!JSON.stringify(events.rows).includes(signingKey));
  });

  it("an SMS is POSTed signed, with the org's text; the receiver verifies it", async () => {
    const text = await server.api('PUT', '/management/v1/text/message/VerifyPhone/en', { body: { text: 'ACME code {{.Code}} for {{.FirstName}}' }, orgId });
    assert.equal(text.status, 200, text.text);
    await relay.start();
    const [id] = await enqueue(
      server.running.db,
      message({ type: 'VerifyPhone', channel: 'sms', recipient: '+41791234567', orgId, userId: 'user-1', values: { Code: 'Q7K2M9X4', FirstName: 'Ada' } }),
    );
    await until(id!, (row) => row.state === 'sent');
    const [sms] = relay.received;
    assert.equal(sms!.valid, true, `signature checks: ${sms!.signature}`);
    assert.deepEqual(JSON.parse(sms!.body), { to: '+41791234567', text: 'ACME code Q7K2M9X4 for Ada', type: 'VerifyPhone', userId: 'user-1', orgId });
  });

  it('a relay that is down, then answers 503, then is back: the SMS arrives once, signed anew', async () => {
    await relay.stop();
    relay.received.length = 0;
    const [id] = await enqueue(
      server.running.db,
      message({ type: 'OtpSms', channel: 'sms', recipient: '+41790000000', orgId, values: { Code: 'A1B2C3D4', OrgName: 'ACME' } }),
    );
    const down = await until(id!, (row) => row.last_error !== null);
    assert.equal(down.state, 'pending');

    relayStatus = 503;
    await relay.start();
    await retryNow(id!);
    const refused = await until(id!, (row) => row.last_error === 'the SMS relay answered HTTP 503');
    assert.equal(refused.state, 'pending');

    relayStatus = 200;
    await retryNow(id!);
    await until(id!, (row) => row.state === 'sent');
    assert.equal(relay.received.length, 2, 'the refused attempt and the delivered one');
    for (const sms of relay.received) assert.equal(sms.valid, true);
    assert.equal(JSON.parse(relay.received[1]!.body).text, 'ACME: your sign-in code is A1B2C3D4. It expires in 5 minutes.');
  });

  it('without a relay an SMS waits and is retried, nothing is lost', async () => {
    assert.equal((await server.api('DELETE', '/admin/v1/sms/http')).status, 200);
    const [id] = await enqueue(server.running.db, message({ type: 'OtpSms', channel: 'sms', recipient: '+41790000001', orgId }));
    const waiting = await until(id!, (row) => row.last_error !== null);
    assert.equal(waiting.last_error, 'no SMS relay is set');
    assert.equal(waiting.state, 'pending');
  });
});
