import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { apiClient, request, type Api, type ApiResponse } from '../support/api.ts';
import { readAdminPat, testServer, type TestServer } from '../support/server.ts';
import { beginWrite } from '../../src/storage/event-log.ts';
import { addPasskey } from '../../src/storage/passkeys.ts';
import { newId } from '../../src/domain/ids.ts';

// The security page's own sign-in (docs/security.md, Second factors) and
// the address throttle: a passkey answer that does not verify counts as a
// failed authentication there as at the login, and a blocked address gets
// the 429 page at the second step too, whatever it posts.

const PASSWORD = 'Right-Passw0rd';
const PASSKEY_FAILED = /The passkey was not accepted/;

describe("the security page's second step and the address throttle", () => {
  let server: TestServer;
  let admin: Api;
  let loginName: string;

  /** The browser's cookie jar: the security page's signed cookie. */
  let cookie = '';
  const keep = (answer: ApiResponse) => {
    const set = answer.headers.getSetCookie().map((c) => c.split(';')[0]!);
    if (set.length) cookie = set.join('; ');
    return answer;
  };
  const field = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
  const post = async (path: string, fields: Record<string, string>) =>
    keep(
      await request(`${server.url}/ui/login/security${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      }),
    );

  /** Signs in on the security page with the password and answers its second step: the passkey form's CSRF token and challenge. */
  async function secondStep(): Promise<{ csrf: string; challengeId: string }> {
    cookie = '';
    const page = keep(await request(`${server.url}/ui/login/security`));
    const csrf = field(page.text, 'csrf');
    assert.ok(csrf, page.text.slice(0, 300));
    const second = await post('/sign-in', { csrf, loginName, password: PASSWORD });
    assert.equal(second.status, 200, second.text.slice(0, 300));
    const challengeId = field(second.text, 'challengeId');
    const nextCsrf = field(second.text, 'csrf');
    assert.ok(challengeId && nextCsrf, 'the second step offers the passkey');
    return { csrf: nextCsrf, challengeId };
  }

  before(async () => {
    server = await testServer({ env: { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_WINDOW: '60' } });
    admin = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
    const created = await admin('POST', '/management/v1/users/human', {
      body: { userName: 'keyholder', profile: { firstName: 'Key', lastName: 'Holder' }, email: { email: 'keyholder@example.test' }, password: PASSWORD },
    });
    assert.equal(created.status, 200, created.text);
    const user = await admin('GET', `/management/v1/users/${created.body.userId}`);
    loginName = user.body.user.preferredLoginName;
    const { rows } = await server.running.db.query<{ org_id: string }>('SELECT org_id FROM users WHERE id = $1', [created.body.userId]);
    await server.running.db.transaction(async (tx) =>
      assert.ok(
        await addPasskey(
          await beginWrite(tx, { userId: created.body.userId }),
          { id: created.body.userId, orgId: rows[0]!.org_id },
          { id: newId(), credentialId: randomBytes(16).toString('base64url'), publicKey: randomBytes(77), counter: 0, transports: [], name: 'key' },
        ),
      ),
    );
  });
  after(async () => {
    await server?.stop();
  });

  test('passkey answers that do not verify count against the address; past the limit the second step is the 429 page', async () => {
    for (let i = 0; i < 3; i += 1) {
      const { csrf, challengeId } = await secondStep();
      const refused = await post('/passkey-factor', {
        csrf,
        challengeId,
        response: JSON.stringify({ id: 'not-a-registered-credential', type: 'public-key', response: {} }),
      });
      assert.equal(refused.status, 200, refused.text.slice(0, 300));
      assert.match(refused.text, PASSKEY_FAILED, 'the passkey was refused, not taken for a typing slip');
    }
    // Three refusals with a limit of two: the address is blocked, at the sign-in and at the second step alike.
    const page = keep(await request(`${server.url}/ui/login/security`));
    const blocked = await post('/sign-in', { csrf: field(page.text, 'csrf')!, loginName, password: PASSWORD });
    assert.equal(blocked.status, 429, blocked.text.slice(0, 300));
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    const code = await post('/code', { csrf: field(page.text, 'csrf')!, code: '123456' });
    assert.equal(code.status, 429, code.text.slice(0, 300));
  });
});
