import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { authenticatePassword } from '../../src/queries/authenticate-password.ts';
import { generateSecret, secretDigest } from '../../src/security/secrets.ts';
import { newId } from '../../src/domain/ids.ts';
import { call, type ApiResponse } from '../support/api.ts';
import { assertErrorBody, assertInvalid, violatedFields } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';

// docs/api/orgs.md and docs/api/README.md: POST /admin/v1/orgs/_setup and
// the user it creates, read back through GET /management/v1/users/{id}.
// Every answer goes through `call`, which fails the test on any 500.

/** The example body of docs/api/orgs.md. */
const ORGS_DOC_EXAMPLE = {
  org: { name: 'ACME', domain: 'acme.example.com' },
  human: {
    userName: 'alice',
    profile: { firstName: 'Alice', lastName: 'Doe', nickName: 'al', displayName: 'Alice Doe', preferredLanguage: 'en', gender: 'GENDER_FEMALE' },
    email: { email: 'alice@acme.example.com', isEmailVerified: true },
    phone: { phone: '+41791234567', isPhoneVerified: false },
    password: 'S3cure-Passw0rd!',
  },
  roles: ['ORG_OWNER'],
};

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function tag(): string {
  return randomBytes(5).toString('hex');
}

/** A minimal valid body with its own org name, domain and userName. */
function validBody(): any {
  const t = tag();
  return {
    org: { name: `Org ${t}`, domain: `${t}.example.com` },
    human: {
      userName: `user_${t}`,
      profile: { firstName: 'Grace', lastName: 'Hopper' },
      email: { email: `grace@${t}.example.com` },
    },
  };
}

function bodyWith(change: (body: any) => void): any {
  const body = validBody();
  change(body);
  return body;
}

/** A valid domain name of exactly `length` characters, unique per call. */
function domainOfLength(length: number): string {
  const labels = [tag()];
  let total = labels[0]!.length;
  while (total < length) {
    const remaining = length - total - 1; // minus the dot
    let size = Math.min(63, remaining);
    if (remaining - size === 1) size -= 1; // never leave room for just a dot
    labels.push('a'.repeat(size));
    total += size + 1;
  }
  const domain = labels.join('.');
  assert.equal(domain.length, length);
  return domain;
}

function isoDate(value: unknown): void {
  assert.equal(typeof value, 'string');
  assert.match(value as string, ISO_8601);
  assert.equal(new Date(value as string).toISOString(), value);
}

function assertDetails(details: any, resourceOwner: string): void {
  assert.ok(details && typeof details === 'object', 'details missing');
  assert.equal(typeof details.sequence, 'string');
  assert.match(details.sequence, /^[1-9]\d*$/);
  isoDate(details.creationDate);
  isoDate(details.changeDate);
  assert.equal(details.resourceOwner, resourceOwner);
}

describe('organization setup: POST /admin/v1/orgs/_setup', () => {
  let server: TestServer;

  before(async () => {
    server = await testServer();
  });
  after(async () => {
    await server?.stop();
  });

  const setup = (body: unknown, token: string = server.pat): Promise<ApiResponse> =>
    call(`${server.url}/admin/v1/orgs/_setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  const getUser = (userId: string, orgId?: string, token: string = server.pat): Promise<ApiResponse> =>
    call(`${server.url}/management/v1/users/${encodeURIComponent(userId)}`, {
      headers: { authorization: `Bearer ${token}`, ...(orgId === undefined ? {} : { 'x-service-orgid': orgId }) },
    });

  async function counts(): Promise<Record<string, number>> {
    const result: Record<string, number> = {};
    for (const table of ['orgs', 'org_domains', 'users', 'memberships', 'events']) {
      const { rows } = await server.running.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      result[table] = rows[0]!.n;
    }
    return result;
  }

  async function expectOk(body: unknown): Promise<ApiResponse> {
    const response = await setup(body);
    assert.equal(response.status, 200, `expected 200, got ${response.status}: ${response.text.slice(0, 300)}`);
    return response;
  }

  /** Inserts a PAT for `userId` straight into the table and returns the token. */
  async function insertPat(userId: string, expiresAt: Date | null): Promise<string> {
    const token = generateSecret();
    await server.running.db.query('INSERT INTO personal_access_tokens (id, user_id, digest, expires_at, created_at) VALUES ($1, $2, $3, $4, now())', [
      newId(),
      userId,
      secretDigest(server.secretKey, token),
      expiresAt,
    ]);
    return token;
  }

  async function adminMachineUserId(): Promise<string> {
    const { rows } = await server.running.db.query<{ id: string }>("SELECT id FROM users WHERE user_name = 'portcullis-admin'");
    assert.equal(rows.length, 1);
    return rows[0]!.id;
  }

  describe('success', () => {
    let created: ApiResponse;

    before(async () => {
      created = await setup(ORGS_DOC_EXAMPLE);
    });

    it('creates org, user and membership from the example of docs/api/orgs.md and answers 200 with details, orgId and userId', () => {
      assert.equal(created.status, 200, created.text);
      const { orgId, userId, details } = created.body;
      assert.match(orgId, /^\d+$/);
      assert.match(userId, /^\d+$/);
      assert.notEqual(orgId, userId);
      assertDetails(details, orgId);
      assert.deepEqual(Object.keys(created.body).sort(), ['details', 'orgId', 'userId']);
    });

    it('the response never echoes the password', () => {
      assert.ok(!created.text.includes(ORGS_DOC_EXAMPLE.human.password));
    });

    it('the created user reads back through GET /management/v1/users/{id} in its org, without any credential', async () => {
      const { orgId, userId } = created.body;
      const response = await getUser(userId, orgId);
      assert.equal(response.status, 200, response.text);
      const user = response.body.user;
      assert.equal(user.id, userId);
      assert.equal(user.userName, 'alice');
      assert.ok(user.loginNames.includes('alice@acme.example.com'), JSON.stringify(user.loginNames));
      assert.equal(user.preferredLoginName, 'alice@acme.example.com');
      assert.equal(user.state, 'USER_STATE_ACTIVE');
      assert.deepEqual(user.human.profile, {
        firstName: 'Alice',
        lastName: 'Doe',
        nickName: 'al',
        displayName: 'Alice Doe',
        preferredLanguage: 'en',
        gender: 'GENDER_FEMALE',
      });
      assert.deepEqual(user.human.email, { email: 'alice@acme.example.com', isEmailVerified: true });
      assert.deepEqual(user.human.phone, { phone: '+41791234567', isPhoneVerified: false });
      assertDetails(user.details, orgId);
      assert.equal(user.human.passwordSet, true);
      // The one field about the password says only whether there is one.
      const text = response.text.toLowerCase().replace('"passwordset":true', '');
      for (const forbidden of ['password', 'hash', '$argon2', ORGS_DOC_EXAMPLE.human.password.toLowerCase()]) {
        assert.ok(!text.includes(forbidden), `user view contains "${forbidden}"`);
      }
    });

    it('stores the requested roles as the membership of the user in the new org', async () => {
      const { orgId, userId } = created.body;
      const { rows } = await server.running.db.query<{ scope: string; scope_id: string; roles: string[] }>(
        'SELECT scope, scope_id, roles FROM memberships WHERE user_id = $1',
        [userId],
      );
      assert.deepEqual(rows, [{ scope: 'org', scope_id: orgId, roles: ['ORG_OWNER'] }]);
    });

    it('the details are those of the write: sequence is the last event of the setup, dates are its timestamp', async () => {
      const { orgId, details } = created.body;
      const { rows } = await server.running.db.query<{ position: string; created_at: Date }>(
        'SELECT position::text AS position, created_at FROM events WHERE resource_owner = $1 ORDER BY events.position',
        [orgId],
      );
      assert.ok(rows.length >= 3, 'org, user and membership events');
      const last = rows[rows.length - 1]!;
      assert.equal(details.sequence, last.position);
      assert.equal(details.creationDate, new Date(last.created_at).toISOString());
      assert.equal(details.changeDate, new Date(last.created_at).toISOString());
    });

    it('the human created by setup logs in with the full login name, case-insensitively', async () => {
      const { userId } = created.body;
      const db = server.running.db;
      assert.equal(await authenticatePassword(db, 'alice@acme.example.com', 'S3cure-Passw0rd!'), userId);
      assert.equal(await authenticatePassword(db, 'ALICE@Acme.Example.COM', 'S3cure-Passw0rd!'), userId);
      assert.equal(await authenticatePassword(db, 'alice@acme.example.com', 'S3cure-Passw0rd?'), undefined);
      assert.equal(await authenticatePassword(db, 'alice@acme.example.com', 's3cure-passw0rd!'), undefined, 'passwords are case-sensitive');
    });

    it('the same domain a second time is 409 ALREADY_EXISTS, also written in other case or with a trailing dot', async () => {
      const before = await counts();
      for (const domain of ['acme.example.com', 'ACME.example.com', 'Acme.Example.Com', 'acme.example.com.']) {
        const body = bodyWith((b) => {
          b.org.domain = domain;
        });
        const response = await setup(body);
        assert.equal(response.status, 409, `${domain}: ${response.text}`);
        assertErrorBody(response, 6);
      }
      assert.deepEqual(await counts(), before, 'a rejected duplicate leaves nothing behind');
    });
  });

  describe('defaults', () => {
    it('without displayName, roles, domain and gender: "firstName lastName", ORG_OWNER, {slug}.{INSTANCE_DOMAIN}, GENDER_UNSPECIFIED', async () => {
      const userName = `anna_${tag()}`;
      const response = await expectOk({
        org: { name: 'Ärger & Co' },
        human: { userName, profile: { firstName: 'Anna', lastName: 'Berger' }, email: { email: 'anna@example.org' } },
      });
      const { orgId, userId } = response.body;
      assertDetails(response.body.details, orgId);

      const { rows: domains } = await server.running.db.query<{ domain: string; is_primary: boolean }>(
        'SELECT domain, is_primary FROM org_domains WHERE org_id = $1',
        [orgId],
      );
      assert.deepEqual(domains, [{ domain: 'arger-co.example.test', is_primary: true }]);

      const { rows: memberships } = await server.running.db.query<{ scope: string; scope_id: string; roles: string[] }>(
        'SELECT scope, scope_id, roles FROM memberships WHERE user_id = $1',
        [userId],
      );
      assert.deepEqual(memberships, [{ scope: 'org', scope_id: orgId, roles: ['ORG_OWNER'] }]);

      const read = await getUser(userId, orgId);
      assert.equal(read.status, 200, read.text);
      const user = read.body.user;
      assert.equal(user.preferredLoginName, `${userName}@arger-co.example.test`);
      assert.equal(user.human.profile.displayName, 'Anna Berger');
      assert.equal(user.human.profile.gender, 'GENDER_UNSPECIFIED');
      assert.equal(user.human.email.isEmailVerified, false);
    });

    it('a blank displayName counts as not set', async () => {
      const body = bodyWith((b) => {
        b.human.profile.displayName = '';
      });
      const { orgId, userId } = (await expectOk(body)).body;
      assert.equal((await getUser(userId, orgId)).body.user.human.profile.displayName, 'Grace Hopper');
    });

    it('an empty roles list also means ORG_OWNER; an explicit org role is stored as given', async () => {
      const [empty, manager] = await Promise.all([
        expectOk(bodyWith((b) => (b.roles = []))),
        expectOk(bodyWith((b) => (b.roles = ['ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR']))),
      ]);
      const rolesOf = async (userId: string) =>
        (await server.running.db.query<{ roles: string[] }>('SELECT roles FROM memberships WHERE user_id = $1', [userId])).rows.map((r) => [...r.roles].sort());
      assert.deepEqual(await rolesOf(empty.body.userId), [['ORG_OWNER']]);
      assert.deepEqual(await rolesOf(manager.body.userId), [['ORG_END_USER_IMPERSONATOR', 'ORG_USER_MANAGER']]);
    });

    it('two orgs without a domain and the same name: the second generated domain is taken, 409', async () => {
      const name = `Twin ${tag()}`;
      await expectOk(bodyWith((b) => (b.org = { name })));
      const second = await setup(bodyWith((b) => (b.org = { name })));
      assert.equal(second.status, 409, second.text);
      assertErrorBody(second, 6);
    });
  });

  describe('limits (docs/api/orgs.md): each answered 400, code 3, naming the exact field', () => {
    const cases: Array<{ title: string; change: (body: any) => void; rejects?: string[] }> = [
      { title: 'org.name of 200 characters is accepted', change: (b) => (b.org.name = 'N'.repeat(200)) },
      { title: 'org.name of 200 characters outside the BMP (emoji) is accepted', change: (b) => (b.org.name = '🦀'.repeat(200)) },
      { title: 'org.name of 201 characters is rejected', change: (b) => (b.org.name = 'N'.repeat(201)), rejects: ['org.name'] },
      { title: 'an empty org.name is rejected', change: (b) => (b.org.name = ''), rejects: ['org.name'] },
      { title: 'org.domain of 200 characters is accepted', change: (b) => (b.org.domain = domainOfLength(200)) },
      { title: 'org.domain of 201 characters is rejected', change: (b) => (b.org.domain = domainOfLength(201)), rejects: ['org.domain'] },
      { title: 'an org.domain that is no domain name is rejected', change: (b) => (b.org.domain = 'not a domain'), rejects: ['org.domain'] },
      { title: 'human.userName of 200 characters is accepted', change: (b) => (b.human.userName = `${tag()}${'u'.repeat(190)}`) },
      { title: 'human.userName of 201 characters is rejected', change: (b) => (b.human.userName = 'u'.repeat(201)), rejects: ['human.userName'] },
      { title: 'an empty human.userName is rejected', change: (b) => (b.human.userName = ''), rejects: ['human.userName'] },
      { title: 'human.profile.firstName of 200 characters is accepted', change: (b) => (b.human.profile.firstName = 'F'.repeat(200)) },
      {
        title: 'human.profile.firstName of 201 characters is rejected',
        change: (b) => (b.human.profile.firstName = 'F'.repeat(201)),
        rejects: ['human.profile.firstName'],
      },
      { title: 'an empty human.profile.firstName is rejected', change: (b) => (b.human.profile.firstName = ''), rejects: ['human.profile.firstName'] },
      { title: 'human.profile.lastName of 200 characters is accepted', change: (b) => (b.human.profile.lastName = 'L'.repeat(200)) },
      {
        title: 'human.profile.lastName of 201 characters is rejected',
        change: (b) => (b.human.profile.lastName = 'L'.repeat(201)),
        rejects: ['human.profile.lastName'],
      },
      { title: 'an empty human.profile.lastName is rejected', change: (b) => (b.human.profile.lastName = ''), rejects: ['human.profile.lastName'] },
      { title: 'human.profile.nickName of 200 characters is accepted', change: (b) => (b.human.profile.nickName = 'k'.repeat(200)) },
      {
        title: 'human.profile.nickName of 201 characters is rejected',
        change: (b) => (b.human.profile.nickName = 'k'.repeat(201)),
        rejects: ['human.profile.nickName'],
      },
      { title: 'human.profile.displayName of 200 characters is accepted', change: (b) => (b.human.profile.displayName = 'D'.repeat(200)) },
      {
        title: 'human.profile.displayName of 201 characters is rejected',
        change: (b) => (b.human.profile.displayName = 'D'.repeat(201)),
        rejects: ['human.profile.displayName'],
      },
      { title: 'preferredLanguage of 10 characters ("de-CH-1996") is accepted', change: (b) => (b.human.profile.preferredLanguage = 'de-CH-1996') },
      {
        title: 'preferredLanguage of 11 characters is rejected',
        change: (b) => (b.human.profile.preferredLanguage = 'de-CH-19961'),
        rejects: ['human.profile.preferredLanguage'],
      },
      { title: 'a gender outside the enum is rejected', change: (b) => (b.human.profile.gender = 'GENDER_OTHER'), rejects: ['human.profile.gender'] },
      { title: 'a phone of 50 characters is accepted', change: (b) => (b.human.phone = { phone: `+${'4'.repeat(49)}` }) },
      { title: 'a phone of 51 characters is rejected', change: (b) => (b.human.phone = { phone: `+${'4'.repeat(50)}` }), rejects: ['human.phone.phone'] },
      { title: 'an empty phone is rejected', change: (b) => (b.human.phone = { phone: '' }), rejects: ['human.phone.phone'] },
      { title: 'a phone object without the number is rejected', change: (b) => (b.human.phone = { isPhoneVerified: true }), rejects: ['human.phone.phone'] },
      ...['0791234567', '+', '+41 79 123', 'abc', '+41-79-123x'].map((phone) => ({
        title: `a phone not in RFC 3966 global form ("${phone}") is rejected`,
        change: (b: any) => (b.human.phone = { phone }),
        rejects: ['human.phone.phone'],
      })),
      ...['+41-79-123.45.67', '+1(555)123-4567'].map((phone) => ({
        title: `a phone with RFC 3966 visual separators ("${phone}") is accepted`,
        change: (b: any) => (b.human.phone = { phone }),
      })),
      ...['', 'alice', 'alice@', '@x.com', 'a b@x.com'].map((email) => ({
        title: `the email "${email}" is rejected`,
        change: (b: any) => (b.human.email.email = email),
        rejects: ['human.email.email'],
      })),
      { title: 'a missing org is named', change: (b) => delete b.org, rejects: ['org'] },
      { title: 'a missing org.name is named', change: (b) => delete b.org.name, rejects: ['org.name'] },
      { title: 'a missing human is named', change: (b) => delete b.human, rejects: ['human'] },
      { title: 'a missing human.userName is named', change: (b) => delete b.human.userName, rejects: ['human.userName'] },
      { title: 'a missing human.profile is named', change: (b) => delete b.human.profile, rejects: ['human.profile'] },
      { title: 'a missing human.email is named', change: (b) => delete b.human.email, rejects: ['human.email'] },
      { title: 'a missing human.profile.firstName is named', change: (b) => delete b.human.profile.firstName, rejects: ['human.profile.firstName'] },
      { title: 'a string where an object belongs is named', change: (b) => (b.human.email = 'grace@example.com'), rejects: ['human.email'] },
      { title: 'a number where a string belongs is named', change: (b) => (b.human.profile.firstName = 42), rejects: ['human.profile.firstName'] },
      { title: 'an unknown top-level field is rejected and named', change: (b) => (b.orgName = 'x'), rejects: ['orgName'] },
      { title: 'an unknown field in org is rejected and named', change: (b) => (b.org.website = 'https://x'), rejects: ['org.website'] },
      {
        title: 'an unknown nested field in human.profile is rejected and named',
        change: (b) => (b.human.profile.middleName = 'M'),
        rejects: ['human.profile.middleName'],
      },
      { title: 'an unknown role is rejected, naming roles[0]', change: (b) => (b.roles = ['ORG_GOD']), rejects: ['roles[0]'] },
      { title: 'an instance role is not an org role: IAM_OWNER is rejected, naming roles[0]', change: (b) => (b.roles = ['IAM_OWNER']), rejects: ['roles[0]'] },
      {
        title: 'an unknown role after a known one names its own index, roles[1]',
        change: (b) => (b.roles = ['ORG_OWNER', 'org_owner']),
        rejects: ['roles[1]'],
      },
      {
        title: 'a password shorter than 8 characters is rejected, naming human.password',
        change: (b) => (b.human.password = 'Abc-123'),
        rejects: ['human.password'],
      },
      { title: 'a password of exactly 8 characters is accepted', change: (b) => (b.human.password = 'Abcd-123') },
      {
        title: 'several bad fields at once are all named in one response',
        change: (b) => {
          b.org.name = '';
          b.human.userName = 'u'.repeat(201);
          b.human.email.email = 'alice';
          b.human.phone = { phone: 'abc' };
          b.human.profile.preferredLanguage = 'de-CH-19961';
          b.human.profile.foo = 1;
          b.extra = true;
        },
        rejects: ['org.name', 'human.userName', 'human.email.email', 'human.phone.phone', 'human.profile.preferredLanguage', 'human.profile.foo', 'extra'],
      },
      {
        title: 'a bad field and an unknown role are both named in one response (docs/api/README.md: every bad field named)',
        change: (b) => {
          b.human.profile.firstName = '';
          b.roles = ['ORG_GOD'];
        },
        rejects: ['human.profile.firstName', 'roles[0]'],
      },
      {
        title: 'a bad field and a too-short password are both named in one response (docs/api/README.md: every bad field named)',
        change: (b) => {
          b.human.email.email = 'alice';
          b.human.password = 'short';
        },
        rejects: ['human.email.email', 'human.password'],
      },
      {
        title: 'two unknown roles are both named in one response (docs/api/README.md: every bad field named)',
        change: (b) => (b.roles = ['ORG_GOD', 'ORG_KING']),
        rejects: ['roles[0]', 'roles[1]'],
      },
      {
        title: 'a NUL character in org.name is a 400 naming the field, not a database error',
        change: (b) => (b.org.name = 'Nul\u0000Org'),
        rejects: ['org.name'],
      },
      {
        title: 'a NUL character in human.userName is a 400 naming the field, not a database error',
        change: (b) => (b.human.userName = 'nul\u0000user'),
        rejects: ['human.userName'],
      },
      {
        title: 'an unpaired surrogate in human.profile.nickName is a 400 naming the field, not a database error',
        change: (b) => (b.human.profile.nickName = 'x\ud800y'),
        rejects: ['human.profile.nickName'],
      },
    ];

    for (const { title, change, rejects } of cases) {
      it(title, async () => {
        const body = bodyWith(change);
        const response = await setup(body);
        if (rejects) {
          assertInvalid(response, rejects);
        } else {
          assert.equal(response.status, 200, response.text.slice(0, 400));
          assertDetails(response.body.details, response.body.orgId);
        }
      });
    }

    it('the stored values of accepted boundary cases are returned unchanged', async () => {
      const name = '🦀'.repeat(200);
      const displayName = 'D'.repeat(200);
      const phone = '+1(555)123-4567';
      const body = bodyWith((b) => {
        b.org.name = name;
        b.human.profile.displayName = displayName;
        b.human.profile.preferredLanguage = 'de-CH-1996';
        b.human.phone = { phone, isPhoneVerified: true };
      });
      const { orgId, userId } = (await expectOk(body)).body;
      const { rows } = await server.running.db.query<{ name: string }>('SELECT name FROM orgs WHERE id = $1', [orgId]);
      assert.equal(rows[0]!.name, name);
      const user = (await getUser(userId, orgId)).body.user;
      assert.equal(user.human.profile.displayName, displayName);
      assert.equal(user.human.profile.preferredLanguage, 'de-CH-1996');
      assert.deepEqual(user.human.phone, { phone, isPhoneVerified: true });
    });
  });

  describe('all or nothing', () => {
    it('a setup whose human is invalid leaves no org, user, membership or event behind', async () => {
      const before = await counts();
      const responses = await Promise.all([
        setup(bodyWith((b) => (b.human.email.email = 'not-an-email'))),
        setup(bodyWith((b) => delete b.human.profile)),
        setup(bodyWith((b) => (b.roles = ['NOPE']))),
        // The password policy is checked after the schema, still before any write.
        setup(bodyWith((b) => (b.human.password = 'short'))),
      ]);
      for (const response of responses) assert.equal(response.status, 400, response.text);
      assert.deepEqual(await counts(), before);
    });

    it('a setup that fails inside its transaction (after the org row is written) leaves nothing behind', async () => {
      // A NUL in the userName passes validation today and is refused by the
      // database only when the user row is inserted, after the org's rows.
      // Whatever the status, the org must not remain. Raw fetch: this test is
      // about atomicity; the 400-not-500 rule is asserted in the limits above.
      const before = await counts();
      const body = bodyWith((b) => (b.human.userName = 'nul\u0000user'));
      const response = await fetch(`${server.url}/admin/v1/orgs/_setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` },
        body: JSON.stringify(body),
      });
      await response.text();
      assert.notEqual(response.status, 200);
      assert.deepEqual(await counts(), before);
      const { rows } = await server.running.db.query('SELECT 1 FROM org_domains WHERE domain = $1', [body.org.domain]);
      assert.equal(rows.length, 0);
    });
  });

  describe('concurrency', () => {
    it('four concurrent setups with the same domain: exactly one 200, the others 409, and exactly one new org', async () => {
      const before = await counts();
      const domain = `race-${tag()}.example.com`;
      const responses = await Promise.all(Array.from({ length: 4 }, () => setup(bodyWith((b) => (b.org.domain = domain)))));
      const statuses = responses.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 409, 409, 409], responses.map((r) => r.text).join('\n'));
      for (const response of responses.filter((r) => r.status === 409)) assertErrorBody(response, 6);
      const after = await counts();
      assert.equal(after.orgs! - before.orgs!, 1);
      assert.equal(after.users! - before.users!, 1);
      assert.equal(after.memberships! - before.memberships!, 1);
    });

    it('concurrent setups whose domains differ only in case: exactly one 200', async () => {
      const domain = `case-${tag()}.example.com`;
      const responses = await Promise.all([domain, domain.toUpperCase(), `${domain}.`].map((d) => setup(bodyWith((b) => (b.org.domain = d)))));
      assert.deepEqual(responses.map((r) => r.status).sort(), [200, 409, 409]);
    });

    it('five concurrent writers get distinct sequences; positions grow strictly and dates never go back', async () => {
      const responses = await Promise.all(Array.from({ length: 5 }, () => expectOk(validBody())));
      const sequences = responses.map((r) => r.body.details.sequence as string);
      assert.equal(new Set(sequences).size, 5, `sequences ${sequences.join(', ')}`);

      // Each setup's events form one unbroken run ending at its sequence: the
      // writers did not interleave.
      for (const { body } of responses) {
        const { rows } = await server.running.db.query<{ first: string; last: string; n: number; created: Date[] }>(
          'SELECT min(position)::text AS first, max(position)::text AS last, count(*)::int AS n FROM events WHERE resource_owner = $1',
          [body.orgId],
        );
        const { first, last, n } = rows[0]!;
        assert.equal(last, body.details.sequence);
        assert.equal(Number(last) - Number(first) + 1, n, 'events of one setup are contiguous');
      }

      const { rows: events } = await server.running.db.query<{ position: string; created_at: Date }>(
        'SELECT position::text AS position, created_at FROM events ORDER BY events.position',
      );
      for (let i = 1; i < events.length; i++) {
        assert.ok(BigInt(events[i]!.position) > BigInt(events[i - 1]!.position));
        assert.ok(
          new Date(events[i]!.created_at).getTime() >= new Date(events[i - 1]!.created_at).getTime(),
          `created_at goes back at position ${events[i]!.position}`,
        );
      }
      // Later sequences have dates no earlier than earlier ones.
      const ordered = responses.map((r) => r.body.details).sort((a, b) => Number(a.sequence) - Number(b.sequence));
      for (let i = 1; i < ordered.length; i++) assert.ok(Date.parse(ordered[i].creationDate) >= Date.parse(ordered[i - 1].creationDate));
    });
  });

  describe('authentication and permission', () => {
    it('without Authorization: 401, code 16, with WWW-Authenticate: Bearer', async () => {
      const response = await call(`${server.url}/admin/v1/orgs/_setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(validBody()),
      });
      assert.equal(response.status, 401);
      assertErrorBody(response, 16);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
    });

    it('an unknown PAT is 401', async () => {
      const response = await setup(validBody(), generateSecret());
      assert.equal(response.status, 401);
      assertErrorBody(response, 16);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer\b/);
    });

    it('an expired PAT is 401, while the same kind of PAT not yet expired works', async () => {
      const machineId = await adminMachineUserId();
      const expired = await insertPat(machineId, new Date(Date.now() - 60_000));
      const valid = await insertPat(machineId, new Date(Date.now() + 3_600_000));
      const rejected = await setup(validBody(), expired);
      assert.equal(rejected.status, 401, rejected.text);
      assertErrorBody(rejected, 16);
      const accepted = await setup(validBody(), valid);
      assert.equal(accepted.status, 200, accepted.text);
    });

    it('a valid PAT of a user without IAM_OWNER is 403, code 7, and creates nothing', async () => {
      const owner = await expectOk(validBody());
      const token = await insertPat(owner.body.userId, null);
      const before = await counts();
      const response = await setup(validBody(), token);
      assert.equal(response.status, 403, response.text);
      assertErrorBody(response, 7);
      assert.deepEqual(await counts(), before);
      // The token itself is good: its owner may read their own user.
      const self = await getUser(owner.body.userId, undefined, token);
      assert.equal(self.status, 200, self.text);
    });

    it('a malformed Authorization header is 401', async () => {
      const headers = [
        'Basic x',
        'Basic YWRtaW46YWRtaW4=',
        'Bearer',
        'Bearer ',
        `Bearer ${server.pat} extra`,
        'Bearer a b',
        'Bearer <garbage>',
        `Token ${server.pat}`,
        `${server.pat}`,
      ];
      const responses = await Promise.all(
        headers.map((authorization) =>
          call(`${server.url}/admin/v1/orgs/_setup`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization },
            body: JSON.stringify(validBody()),
          }),
        ),
      );
      responses.forEach((response, i) => {
        assert.equal(response.status, 401, `${headers[i]}: ${response.text}`);
        assertErrorBody(response, 16);
      });
    });
    it('the auth scheme is matched case-insensitively (RFC 7235 section 2.1): "bearer <PAT>" authenticates', async () => {
      const response = await call(`${server.url}/admin/v1/orgs/_setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `bearer ${server.pat}` },
        body: JSON.stringify(validBody()),
      });
      assert.equal(response.status, 200, response.text);
    });
  });

  describe('transport', () => {
    const post = (body: string, contentType: string) =>
      call(`${server.url}/admin/v1/orgs/_setup`, { method: 'POST', headers: { 'content-type': contentType, authorization: `Bearer ${server.pat}` }, body });

    it('malformed JSON is 400, code 3', async () => {
      for (const text of ['{"org":', '{org: {}}', "{'a': 1}", '{"a":1,}']) {
        const response = await post(text, 'application/json');
        assert.equal(response.status, 400, `${text}: ${response.text}`);
        assertErrorBody(response, 3);
      }
    });

    it('a body that is a JSON array, string, number or null is 400', async () => {
      for (const text of ['[]', '[{"org":{}}]', '"org"', '42', 'null', 'true']) {
        const response = await post(text, 'application/json');
        assert.equal(response.status, 400, `${text}: ${response.text}`);
        assertErrorBody(response, 3);
      }
    });

    it('JSON nested deeper than 32 levels is 400, code 3, naming the body; 32 levels are read as usual', async () => {
      for (const depth of [33, 1000, 100_000]) {
        for (const text of [`${'['.repeat(depth)}${']'.repeat(depth)}`, `{"org":${'{"a":'.repeat(depth - 1)}1${'}'.repeat(depth)}`]) {
          const response = await post(text, 'application/json');
          assert.equal(response.status, 400, `depth ${depth}: ${response.text.slice(0, 300)}`);
          assertErrorBody(response, 3);
          assert.deepEqual(violatedFields(response), ['(body)']);
        }
      }
      // Brackets inside strings are text, not nesting.
      const bracketsInText = await post(JSON.stringify({ ...validBody(), org: { name: '['.repeat(250), domain: '' } }), 'application/json');
      assertInvalid(bracketsInText, ['org.name'], { what: 'brackets in a string' });
      const deepest = await post(`{"org":${'{"a":'.repeat(30)}1${'}'.repeat(31)}`, 'application/json');
      assert.equal(deepest.status, 400);
      assert.ok(!violatedFields(deepest).includes('(body)'), deepest.text.slice(0, 300));
    });

    it('a valid JSON body under another content type (text/plain, form) is 400', async () => {
      const json = JSON.stringify(validBody());
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const response = await post(json, type);
        assert.equal(response.status, 400, `${type}: ${response.text}`);
        assertErrorBody(response, 3);
      }
    });

    it('application/json with a charset parameter is accepted', async () => {
      const response = await post(JSON.stringify(validBody()), 'application/json; charset=utf-8');
      assert.equal(response.status, 200, response.text);
    });

    it('a body over 1 MiB is 413 with the error body (code 3), with or without Content-Length', async () => {
      const big = JSON.stringify({ ...validBody(), padding: 'x'.repeat(1024 * 1024) });
      const sized = await post(big, 'application/json');
      assert.equal(sized.status, 413, sized.text.slice(0, 300));
      assertErrorBody(sized, 3);

      const streamed = await call(`${server.url}/admin/v1/orgs/_setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(streamed.status, 413, streamed.text.slice(0, 300));
      assertErrorBody(streamed, 3);
    });

    it('an unknown path under /admin/v1 is 404, code 5', async () => {
      for (const path of ['/admin/v1/nothing-here', '/admin/v1/orgs/_setup/extra', '/admin/v1/orgs']) {
        const response = await call(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` },
          body: '{}',
        });
        assert.equal(response.status, 404, `${path}: ${response.text}`);
        assertErrorBody(response, 5);
      }
    });

    it('another method on the setup path is 404 or 405 in the error format of docs/api/README.md', async () => {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        const response = await call(`${server.url}/admin/v1/orgs/_setup`, { method, headers: { authorization: `Bearer ${server.pat}` } });
        assert.ok([404, 405].includes(response.status), `${method}: ${response.status} ${response.text}`);
        assertErrorBody(response, response.status === 404 ? 5 : undefined);
      }
    });
  });

  describe('GET /management/v1/users/{id}', () => {
    let acme: { orgId: string; userId: string };

    before(async () => {
      acme = (await expectOk(validBody())).body;
    });

    it('an unknown user id is 404, code 5', async () => {
      const response = await getUser('999999999999999999', acme.orgId);
      assert.equal(response.status, 404, response.text);
      assertErrorBody(response, 5);
    });

    it('a user id that cannot exist (NUL, very long) is 404, not a database error', async () => {
      for (const id of ['\u0000', 'x'.repeat(5000)]) {
        const response = await getUser(id, acme.orgId);
        assert.equal(response.status, 404, response.text);
        assertErrorBody(response, 5);
      }
    });

    it('x-service-orgid of an unknown org is 404, code 5', async () => {
      const response = await getUser(acme.userId, '999999999999999999');
      assert.equal(response.status, 404, response.text);
      assertErrorBody(response, 5);
    });

    it("a user of another org is 404 while acting in the caller's own org, and found in its own", async () => {
      const own = await getUser(acme.userId);
      assert.equal(own.status, 404, own.text);
      assertErrorBody(own, 5);
      const there = await getUser(acme.userId, acme.orgId);
      assert.equal(there.status, 200, there.text);
    });

    it('an org owner cannot read users of another org', async () => {
      const other = (await expectOk(validBody())).body;
      const token = await insertPat(other.userId, null);
      const response = await getUser(acme.userId, acme.orgId, token);
      assert.ok([403, 404].includes(response.status), response.text);
      assertErrorBody(response);
      assert.ok(!response.text.includes('grace@'), 'no user data leaks');
    });
  });

  describe('password login of humans created by setup', () => {
    it('a bare userName logs in when it is unique; wrong passwords and unknown users do not', async () => {
      const userName = `solo_${tag()}`;
      const password = 'Solo-Passw0rd';
      const { userId, orgId } = (
        await expectOk(
          bodyWith((b) => {
            b.human.userName = userName;
            b.human.password = password;
          }),
        )
      ).body;
      const db = server.running.db;
      const { rows } = await db.query<{ domain: string }>('SELECT domain FROM org_domains WHERE org_id = $1 AND is_primary', [orgId]);
      const [bare, full, upper, wrong, unknown, empty] = await Promise.all([
        authenticatePassword(db, userName, password),
        authenticatePassword(db, `${userName}@${rows[0]!.domain}`, password),
        authenticatePassword(db, userName.toUpperCase(), password),
        authenticatePassword(db, userName, `${password}x`),
        authenticatePassword(db, `nobody_${tag()}`, password),
        authenticatePassword(db, userName, ''),
      ]);
      assert.equal(bare, userId);
      assert.equal(full, userId);
      assert.equal(upper, userId);
      assert.equal(wrong, undefined);
      assert.equal(unknown, undefined);
      assert.equal(empty, undefined);
    });

    it('a human without a password cannot log in with any password', async () => {
      const { orgId } = (await expectOk(bodyWith((b) => (b.human.userName = `nopw_${tag()}`)))).body;
      const { rows } = await server.running.db.query<{ user_name: string; domain: string }>(
        'SELECT u.user_name, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.org_id = $1',
        [orgId],
      );
      const login = `${rows[0]!.user_name}@${rows[0]!.domain}`;
      for (const password of ['', 'anything-at-all', 'null']) assert.equal(await authenticatePassword(server.running.db, login, password), undefined);
    });

    it('a bare userName held by users of two orgs is ambiguous; each full login name still works', async () => {
      const userName = `bob_${tag()}`;
      const [a, b] = await Promise.all(
        ['Bob-One!', 'Bob-Two!'].map((password) =>
          expectOk(
            bodyWith((body) => {
              body.human.userName = userName;
              body.human.password = password;
            }),
          ),
        ),
      );
      const domainOf = async (orgId: string) =>
        (await server.running.db.query<{ domain: string }>('SELECT domain FROM org_domains WHERE org_id = $1', [orgId])).rows[0]!.domain;
      const [domainA, domainB] = await Promise.all([domainOf(a!.body.orgId), domainOf(b!.body.orgId)]);
      const db = server.running.db;
      assert.equal(await authenticatePassword(db, userName, 'Bob-One!'), undefined);
      assert.equal(await authenticatePassword(db, userName, 'Bob-Two!'), undefined);
      assert.equal(await authenticatePassword(db, `${userName}@${domainA}`, 'Bob-One!'), a!.body.userId);
      assert.equal(await authenticatePassword(db, `${userName}@${domainB}`, 'Bob-Two!'), b!.body.userId);
      assert.equal(await authenticatePassword(db, `${userName.toUpperCase()}@${domainB.toUpperCase()}`, 'Bob-Two!'), b!.body.userId);
      assert.equal(await authenticatePassword(db, `${userName}@${domainA}`, 'Bob-Two!'), undefined, "one bob's password does not open the other");
    });
  });
});
