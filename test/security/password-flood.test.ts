import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { apiClient, type Api } from '../support/api.ts';
import { readAdminPat, testServer, type InProcessServer } from '../support/server.ts';

// argon2id runs at most as many at once as CPUs, behind a bounded waiting
// line (docs/security.md): a flood of password work beyond it is answered
// 503 with Retry-After at once, not queued without end.

describe('a flood of password hashing on the admin API', () => {
  let server: InProcessServer;
  let admin: Api;
  before(async () => {
    server = await testServer();
    admin = apiClient(server.url, readAdminPat(server.dataDir));
  });
  after(async () => {
    await server?.stop();
  });

  test('beyond the waiting line: 503 code 14 with Retry-After; every other request is created; nothing half-written', async () => {
    const flood = 300;
    const names = Array.from({ length: flood }, (_, i) => `flood-${i}-${randomUUID().slice(0, 6)}`);
    const answers = await Promise.all(
      names.map((userName) =>
        fetch(`${server.url}/management/v1/users/human`, {
          method: 'POST',
          headers: { authorization: `Bearer ${readAdminPat(server.dataDir)}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            userName,
            profile: { firstName: 'F', lastName: 'L' },
            email: { email: `${userName}@example.com` },
            password: 'Flood-Passw0rd!',
          }),
        }).then(async (response) => ({
          userName,
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: (await response.json()) as { code?: number },
        })),
      ),
    );
    const busy = answers.filter((a) => a.status === 503);
    const created = answers.filter((a) => a.status === 200);
    assert.equal(busy.length + created.length, flood, `statuses ${JSON.stringify(answers.map((a) => a.status))}`);
    assert.ok(busy.length > 0, 'some requests were turned away');
    assert.ok(created.length > 0, 'the admitted requests were served');
    // The waiting line answers Retry-After 1. On a loaded machine the flood may
    // also exhaust the database pool, whose own 503 says 5 (the store's
    // outage answer): both are code 14, and the line must have turned some away.
    for (const answer of busy) {
      assert.equal(answer.body.code, 14);
      assert.ok(answer.retryAfter === '1' || answer.retryAfter === '5', `Retry-After ${answer.retryAfter}`);
    }
    assert.ok(
      busy.some((answer) => answer.retryAfter === '1'),
      'the password waiting line turned requests away',
    );
    const { rows } = await server.running.db.query<{ user_name: string }>("SELECT user_name FROM users WHERE user_name LIKE 'flood-%'");
    assert.deepEqual(rows.map((r) => r.user_name).sort(), created.map((a) => a.userName).sort());
    // Afterwards the line is free again.
    const again = await admin('POST', '/management/v1/users/human', {
      body: {
        userName: `after-${randomUUID().slice(0, 6)}`,
        profile: { firstName: 'F', lastName: 'L' },
        email: { email: 'after@example.com' },
        password: 'After-Passw0rd!',
      },
    });
    assert.equal(again.status, 200, again.text);
  });
});
