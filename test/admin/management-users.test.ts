import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';
import { verifyMachineSecret } from '../../src/storage/credentials.ts';
import { machineKeyCache } from '../../src/storage/machine-key-cache.ts';
import type { Queryable } from '../../src/storage/database.ts';

/** The key as the JWT profile grant finds it (a fresh cache: what the database holds now). */
const storedKey = (db: Queryable, userId: string, keyId: string) => machineKeyCache(db).lookup(userId, keyId);

// docs/api/users.md: users of the acting org — humans, machines, machine keys, client
// secrets, personal access tokens, removal — with their permissions, every
// validation rule at its boundary, and no secret ever shown twice or logged.

let server: TestServer;
let defaultOrgId: string;
let defaultDomain: string;
let otherOrgId: string;
let otherOrgUserId: string;
let adminMachineId: string;
/** PAT of a machine user without any role. */
let nobodyPat: string;
/** Every secret handed out: none may appear in a GET answer, the log or the event log. */
const secrets: string[] = [];

const USERS = '/management/v1/users';
const human = (userName: string, extra: Record<string, unknown> = {}) => ({
  userName,
  profile: { firstName: 'Ada', lastName: 'Lovelace' },
  email: { email: `${userName}@example.com`, isEmailVerified: true },
  ...extra,
});

async function addMachine(userName: string, options: { orgId?: string } = {}): Promise<string> {
  const res = await server.api('POST', `${USERS}/machine`, { body: { userName, name: `Machine ${userName}` }, orgId: options.orgId });
  assert.equal(res.status, 200, res.text);
  return res.body.userId;
}

async function addPat(userId: string, options: { orgId?: string; token?: string } = {}): Promise<string> {
  const res = await server.api('POST', `${USERS}/${userId}/pats`, { body: {}, ...options });
  assert.equal(res.status, 200, res.text);
  secrets.push(res.body.token);
  return res.body.token;
}

async function addOrgMember(userId: string, roles: string[], orgId?: string): Promise<void> {
  const res = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId, roles }, orgId });
  assert.equal(res.status, 200, res.text);
}

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const pemBase64 = (pem: string) => Buffer.from(pem).toString('base64');

before(async () => {
  server = await testServer({ captureLog: true });
  const { rows } = await server.running.db.query<{ id: string; org_id: string; domain: string }>(
    `SELECT u.id, u.org_id, d.domain FROM users u JOIN org_domains d ON d.org_id = u.org_id AND d.is_primary WHERE u.user_name = 'portcullis-admin'`,
  );
  ({ id: adminMachineId, org_id: defaultOrgId, domain: defaultDomain } = rows[0]!);
  const setup = await server.api('POST', '/admin/v1/orgs/_setup', { body: { org: { name: 'Other Org' }, human: human('owner') } });
  assert.equal(setup.status, 200, setup.text);
  ({ orgId: otherOrgId, userId: otherOrgUserId } = setup.body);
  nobodyPat = await addPat(await addMachine('nobody'));
});

after(async () => {
  await server?.stop();
});

describe('POST /management/v1/users/human', () => {
  it('adds a human to the acting org, with the display name defaulting to "first last"', async () => {
    const res = await server.api('POST', `${USERS}/human`, { body: human('ada', { password: 'Secret-Passw0rd' }) });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, defaultOrgId);
    const got = await server.api('GET', `${USERS}/${res.body.userId}`);
    assert.equal(got.body.user.preferredLoginName, `ada@${defaultDomain}`);
    assert.equal(got.body.user.human.profile.displayName, 'Ada Lovelace');
    assert.equal(got.body.user.human.email.isEmailVerified, true);
    assert.ok(!got.text.includes('Secret-Passw0rd') && !got.text.includes('argon2'));
    secrets.push('Secret-Passw0rd');
  });

  it('adds the human to the org named by x-service-orgid', async () => {
    const res = await server.api('POST', `${USERS}/human`, { body: human('ada'), orgId: otherOrgId });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, otherOrgId);
  });

  it('applies the password policy (at least 8 characters) to the password field', async () => {
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: human('short', { password: 'Seven7!' }) }), ['password'], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: human('bad name', { password: 'Seven7!' }) }), ['password', 'userName'], {
      atLeast: true,
    });
    assert.equal((await server.api('POST', `${USERS}/human`, { body: human('eight', { password: 'Eight8!!' }) })).status, 200);
  });

  it('checks every field at its limit and names each bad one', async () => {
    assert.equal((await server.api('POST', `${USERS}/human`, { body: human('u'.repeat(200)) })).status, 200);
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: human('u'.repeat(201)) }), ['userName'], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: human('') }), ['userName'], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: human('two words') }), ['userName'], { atLeast: true });
    const bad = await server.api('POST', `${USERS}/human`, {
      body: {
        userName: 'x',
        profile: { firstName: '', lastName: 'l'.repeat(201), gender: 'GENDER_ROBOT' },
        email: { email: 'not-an-email' },
        phone: { phone: '0791234567' },
        color: 'red',
      },
    });
    assertInvalid(bad, ['profile.firstName', 'profile.lastName', 'profile.gender', 'email.email', 'phone.phone', 'color'], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/human`, { body: { userName: 'x', email: { email: 'x@example.com' } } }), ['profile'], { atLeast: true });
  });

  it('answers malformed JSON and a wrong content type with 400', async () => {
    assertInvalid(await server.api('POST', `${USERS}/human`, { raw: '{"userName":' }), [], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/human`, { raw: 'userName=x', contentType: 'application/x-www-form-urlencoded' }), [], { atLeast: true });
  });

  it('refuses a userName already taken in the org, in any letter case (409)', async () => {
    assertError(await server.api('POST', `${USERS}/human`, { body: human('ADA') }), 409);
  });

  it('needs a token (401), ORG_OWNER or ORG_USER_MANAGER (403) and a known org (404)', async () => {
    assertError(await server.api('POST', `${USERS}/human`, { body: human('nobody-1'), token: null }), 401);
    assertError(await server.api('POST', `${USERS}/human`, { body: human('nobody-2'), token: nobodyPat }), 403);
    assertError(await server.api('POST', `${USERS}/human`, { body: human('nobody-3'), orgId: '999999999999999999' }), 404);
  });
});

describe('POST /management/v1/users/machine', () => {
  it('adds a machine user with a bearer access token type by default', async () => {
    const res = await server.api('POST', `${USERS}/machine`, { body: { userName: 'robot', name: 'Robot', description: 'beep' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, defaultOrgId);
    const got = await server.api('GET', `${USERS}/${res.body.userId}`);
    assert.deepEqual(got.body.user.machine, { name: 'Robot', description: 'beep', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' });
    assert.equal(got.body.user.human, undefined);
  });

  it('keeps the JWT access token type when asked', async () => {
    const res = await server.api('POST', `${USERS}/machine`, { body: { userName: 'jwt-robot', name: 'J', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' } });
    const got = await server.api('GET', `${USERS}/${res.body.userId}`);
    assert.equal(got.body.user.machine.accessTokenType, 'ACCESS_TOKEN_TYPE_JWT');
  });

  it('checks userName (1..200, no whitespace), name (1..200), description (..500) and accessTokenType', async () => {
    const post = (body: object) => server.api('POST', `${USERS}/machine`, { body });
    assert.equal((await post({ userName: 'm'.repeat(200), name: 'n'.repeat(200), description: 'd'.repeat(500) })).status, 200);
    assertInvalid(await post({ userName: 'm'.repeat(201), name: 'n' }), ['userName'], { atLeast: true });
    assertInvalid(await post({ userName: '', name: 'n' }), ['userName'], { atLeast: true });
    assertInvalid(await post({ userName: 'a\tb', name: 'n' }), ['userName'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-1', name: '' }), ['name'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-2', name: 'n'.repeat(201) }), ['name'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-2', name: '   ' }), ['name'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-3', name: 'n', description: 'd'.repeat(501) }), ['description'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-4', name: 'n', accessTokenType: 'ACCESS_TOKEN_TYPE_OPAQUE' }), ['accessTokenType'], { atLeast: true });
    assertInvalid(await post({ userName: 'ok-5', name: 'n', owner: 'me' }), ['owner'], { atLeast: true });
    assertInvalid(await post({}), ['userName', 'name'], { atLeast: true });
  });

  it('refuses a duplicate userName in the org (409) but allows it in another org', async () => {
    assertError(await server.api('POST', `${USERS}/machine`, { body: { userName: 'Robot', name: 'again' } }), 409);
    assertError(await server.api('POST', `${USERS}/machine`, { body: { userName: 'ada', name: 'a human has it' } }), 409);
    assert.equal((await server.api('POST', `${USERS}/machine`, { body: { userName: 'robot', name: 'R' }, orgId: otherOrgId })).status, 200);
  });

  it('needs a token (401), the user manager roles (403) and a known org (404)', async () => {
    const body = { userName: 'never', name: 'n' };
    assertError(await server.api('POST', `${USERS}/machine`, { body, token: null }), 401);
    assertError(await server.api('POST', `${USERS}/machine`, { body, token: nobodyPat }), 403);
    assertError(await server.api('POST', `${USERS}/machine`, { body, orgId: 'no-such-org' }), 404);
  });
});

describe('machine keys: POST, GET, DELETE /management/v1/users/{userId}/keys', () => {
  let machineId: string;
  let humanId: string;

  before(async () => {
    machineId = await addMachine('key-holder');
    humanId = (await server.api('POST', `${USERS}/human`, { body: human('key-human') })).body.userId;
  });

  it('generates a key pair and returns the key file once; the stored public key verifies its signatures', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON' } });
    assert.equal(res.status, 200, res.text);
    assertDetails(res.body.details, defaultOrgId);
    const file = JSON.parse(Buffer.from(res.body.keyDetails, 'base64').toString('utf8'));
    assert.deepEqual(Object.keys(file).sort(), ['key', 'keyId', 'type', 'userId']);
    assert.equal(file.type, 'serviceaccount');
    assert.equal(file.keyId, res.body.keyId);
    assert.equal(file.userId, machineId);
    assert.match(file.key, /^-----BEGIN RSA PRIVATE KEY-----/);
    secrets.push(file.key, res.body.keyDetails);

    const jwk = await storedKey(server.running.db, machineId, res.body.keyId);
    assert.ok(jwk);
    assert.equal(jwk.kid, res.body.keyId);
    assert.equal(jwk.d, undefined, 'only the public key is stored');
    const signature = sign('sha256', Buffer.from('assertion'), createPrivateKey(file.key));
    assert.ok(verify('sha256', Buffer.from('assertion'), createPublicKey({ key: jwk as never, format: 'jwk' }), signature));
  });

  it('registers an uploaded RSA 2048 or EC P-256 public key and returns no key file', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaRes = await server.api('POST', `${USERS}/${machineId}/keys`, {
      body: { type: 'KEY_TYPE_JSON', publicKey: pemBase64(rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string) },
    });
    assert.equal(rsaRes.status, 200, rsaRes.text);
    assert.equal(rsaRes.body.keyDetails, undefined);
    const rsaJwk = await storedKey(server.running.db, machineId, rsaRes.body.keyId);
    assert.equal(rsaJwk?.n, rsa.publicKey.export({ format: 'jwk' }).n);
    assert.equal(rsaJwk?.kid, rsaRes.body.keyId);

    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecRes = await server.api('POST', `${USERS}/${machineId}/keys`, {
      body: { type: 'KEY_TYPE_JSON', publicKey: pemBase64(ec.publicKey.export({ type: 'spki', format: 'pem' }) as string) },
    });
    assert.equal(ecRes.status, 200, ecRes.text);
    const ecJwk = await storedKey(server.running.db, machineId, ecRes.body.keyId);
    assert.equal(ecJwk?.crv, 'P-256');
    assert.equal(ecJwk?.alg, 'ES256');
  });

  it('refuses weak, unknown-curve, unreadable and private keys, naming publicKey', async () => {
    const post = (publicKey: string) => server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON', publicKey } });
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
    assertInvalid(await post(pemBase64(rsa1024.publicKey.export({ type: 'spki', format: 'pem' }) as string)), ['publicKey'], { atLeast: true });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    assertInvalid(await post(pemBase64(p384.publicKey.export({ type: 'spki', format: 'pem' }) as string)), ['publicKey'], { atLeast: true });
    assertInvalid(await post(pemBase64('-----BEGIN PUBLIC KEY-----\nnonsense\n-----END PUBLIC KEY-----\n')), ['publicKey'], { atLeast: true });
    assertInvalid(await post('not base64 at all!'), ['publicKey'], { atLeast: true });
    const privatePem = rsa1024.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const leaked = await post(pemBase64(privatePem));
    assertInvalid(leaked, ['publicKey'], { atLeast: true });
    assert.ok(!leaked.text.includes(pemBase64(privatePem).slice(40, 80)));
  });

  it('needs type KEY_TYPE_JSON and an expirationDate in the future', async () => {
    const post = (body: object) => server.api('POST', `${USERS}/${machineId}/keys`, { body });
    assertInvalid(await post({}), ['type'], { atLeast: true });
    assertInvalid(await post({ type: 'KEY_TYPE_X509' }), ['type'], { atLeast: true });
    assertInvalid(await post({ type: 'KEY_TYPE_JSON', expirationDate: new Date(Date.now() - 1000).toISOString() }), ['expirationDate'], { atLeast: true });
    assertInvalid(await post({ type: 'KEY_TYPE_JSON', expirationDate: 'next tuesday' }), ['expirationDate'], { atLeast: true });
    assertInvalid(await post({ type: 'KEY_TYPE_JSON', extra: true }), ['extra'], { atLeast: true });
    assertInvalid(await post({ type: 'KEY_TYPE_X509', expirationDate: '2020-01-01T00:00:00Z', publicKey: '' }), ['type', 'expirationDate', 'publicKey'], {
      atLeast: true,
    });
    const expirationDate = inDays(30);
    const res = await post({ type: 'KEY_TYPE_JSON', expirationDate });
    assert.equal(res.status, 200, res.text);
    secrets.push(res.body.keyDetails);
    const listed = await server.api('GET', `${USERS}/${machineId}/keys`);
    assert.equal(listed.body.result.find((k: { id: string }) => k.id === res.body.keyId).expirationDate, expirationDate);
  });

  it('lists keys with id, type and details but never key material', async () => {
    const res = await server.api('GET', `${USERS}/${machineId}/keys`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.result.length >= 4);
    for (const key of res.body.result) {
      assert.equal(key.type, 'KEY_TYPE_JSON');
      assertDetails(key.details, defaultOrgId);
      assert.deepEqual(
        Object.keys(key).filter((k) => !['id', 'type', 'expirationDate', 'details'].includes(k)),
        [],
      );
    }
    assert.ok(!/PRIVATE|PUBLIC KEY|"n":|"kty"/.test(res.text));
  });

  it('deletes a key: the JWT profile grant no longer finds it, and a second delete is 404', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON' } });
    secrets.push(res.body.keyDetails);
    assert.ok(await storedKey(server.running.db, machineId, res.body.keyId));
    const removed = await server.api('DELETE', `${USERS}/${machineId}/keys/${res.body.keyId}`);
    assert.equal(removed.status, 200, removed.text);
    assertDetails(removed.body.details, defaultOrgId);
    assert.equal(await storedKey(server.running.db, machineId, res.body.keyId), undefined);
    const listed = await server.api('GET', `${USERS}/${machineId}/keys`);
    assert.ok(!listed.body.result.some((k: { id: string }) => k.id === res.body.keyId));
    assertError(await server.api('DELETE', `${USERS}/${machineId}/keys/${res.body.keyId}`), 404);
    assertError(await server.api('DELETE', `${USERS}/${machineId}/keys/123`), 404);
  });

  it('does not find an expired key, nor a key under another user id', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON', expirationDate: inDays(1) } });
    secrets.push(res.body.keyDetails);
    assert.ok(await storedKey(server.running.db, machineId, res.body.keyId));
    assert.equal(await storedKey(server.running.db, adminMachineId, res.body.keyId), undefined);
    await server.running.db.query("UPDATE machine_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [res.body.keyId]);
    assert.equal(await storedKey(server.running.db, machineId, res.body.keyId), undefined);
  });

  it('is for machine users only (400 for a human)', async () => {
    const res = await server.api('POST', `${USERS}/${humanId}/keys`, { body: { type: 'KEY_TYPE_JSON' } });
    assertInvalid(res, [], { atLeast: true });
    assert.match(res.body.message, /keys are for machine users/);
    assertInvalid(await server.api('GET', `${USERS}/${humanId}/keys`), [], { atLeast: true });
  });

  it('answers 401 without a token, 403 without the roles, 404 for unknown users and users of another org', async () => {
    assertError(await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON' }, token: null }), 401);
    assertError(await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON' }, token: nobodyPat }), 403);
    assertError(await server.api('GET', `${USERS}/${machineId}/keys`, { token: nobodyPat }), 403);
    assertError(await server.api('DELETE', `${USERS}/${machineId}/keys/1`, { token: nobodyPat }), 403);
    assertError(await server.api('POST', `${USERS}/424242/keys`, { body: { type: 'KEY_TYPE_JSON' } }), 404);
    assertError(await server.api('GET', `${USERS}/${otherOrgUserId}/keys`), 404);
    assertError(await server.api('GET', `${USERS}/${machineId}/keys`, { orgId: otherOrgId }), 404);
  });
});

describe('machine secret: PUT, DELETE /management/v1/users/{userId}/secret', () => {
  let machineId: string;

  before(async () => {
    machineId = await addMachine('client-app');
  });

  it('returns the userName as clientId and a URL-safe secret that verifies', async () => {
    const res = await server.api('PUT', `${USERS}/${machineId}/secret`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.clientId, 'client-app');
    assert.match(res.body.clientSecret, /^[A-Za-z0-9_-]{43}$/);
    assertDetails(res.body.details, defaultOrgId);
    secrets.push(res.body.clientSecret);
    assert.deepEqual(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', res.body.clientSecret), {
      userId: machineId,
      orgId: defaultOrgId,
    });
    assert.deepEqual(await verifyMachineSecret(server.running.db, server.secretKey, `client-app@${defaultDomain}`, res.body.clientSecret), {
      userId: machineId,
      orgId: defaultOrgId,
    });
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', `${res.body.clientSecret}x`), undefined);
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, 'unknown-client', res.body.clientSecret), undefined);
  });

  it('regenerating replaces the secret: the old one fails, the new one works', async () => {
    const first = await server.api('PUT', `${USERS}/${machineId}/secret`, { body: {} });
    const second = await server.api('PUT', `${USERS}/${machineId}/secret`, { body: {} });
    secrets.push(first.body.clientSecret, second.body.clientSecret);
    assert.notEqual(first.body.clientSecret, second.body.clientSecret);
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', first.body.clientSecret), undefined);
    assert.ok(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', second.body.clientSecret));
  });

  it('deleting the secret makes it fail; deleting it again is 404', async () => {
    const res = await server.api('PUT', `${USERS}/${machineId}/secret`);
    secrets.push(res.body.clientSecret);
    const removed = await server.api('DELETE', `${USERS}/${machineId}/secret`);
    assert.equal(removed.status, 200, removed.text);
    assertDetails(removed.body.details, defaultOrgId);
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', res.body.clientSecret), undefined);
    assertError(await server.api('DELETE', `${USERS}/${machineId}/secret`), 404);
  });

  it('accepts a userName shared by two orgs only as the full login name', async () => {
    const mine = await server.api('PUT', `${USERS}/${machineId}/secret`);
    const twinId = await addMachine('client-app', { orgId: otherOrgId });
    const theirs = await server.api('PUT', `${USERS}/${twinId}/secret`, { orgId: otherOrgId });
    secrets.push(mine.body.clientSecret, theirs.body.clientSecret);
    assert.equal(theirs.body.clientId, 'client-app');
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, 'client-app', mine.body.clientSecret), undefined);
    assert.deepEqual(await verifyMachineSecret(server.running.db, server.secretKey, `client-app@${defaultDomain}`, mine.body.clientSecret), {
      userId: machineId,
      orgId: defaultOrgId,
    });
    const otherDomain = (await server.api('GET', `${USERS}/${twinId}`, { orgId: otherOrgId })).body.user.preferredLoginName;
    assert.deepEqual(await verifyMachineSecret(server.running.db, server.secretKey, otherDomain, theirs.body.clientSecret), {
      userId: twinId,
      orgId: otherOrgId,
    });
    assert.equal(await verifyMachineSecret(server.running.db, server.secretKey, otherDomain, mine.body.clientSecret), undefined);
  });

  it('takes no fields, is for machine users only, and checks token, roles and user', async () => {
    assertInvalid(await server.api('PUT', `${USERS}/${machineId}/secret`, { body: { clientSecret: 'mine' } }), ['clientSecret'], { atLeast: true });
    const humanId = (await server.api('POST', `${USERS}/human`, { body: human('secret-human') })).body.userId;
    assertInvalid(await server.api('PUT', `${USERS}/${humanId}/secret`), [], { atLeast: true });
    assertError(await server.api('PUT', `${USERS}/${machineId}/secret`, { token: null }), 401);
    assertError(await server.api('PUT', `${USERS}/${machineId}/secret`, { token: nobodyPat }), 403);
    assertError(await server.api('DELETE', `${USERS}/${machineId}/secret`, { token: nobodyPat }), 403);
    assertError(await server.api('PUT', `${USERS}/999/secret`), 404);
    assertError(await server.api('PUT', `${USERS}/${otherOrgUserId}/secret`), 404);
  });
});

describe('personal access tokens: POST, GET, DELETE /management/v1/users/{userId}/pats', () => {
  let machineId: string;

  before(async () => {
    machineId = await addMachine('pat-holder');
  });

  it('issues a token that authenticates its machine user at the API', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/pats`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.token, /^[A-Za-z0-9_-]{43}$/);
    assertDetails(res.body.details, defaultOrgId);
    secrets.push(res.body.token);
    const self = await server.api('GET', `${USERS}/${machineId}`, { token: res.body.token });
    assert.equal(self.status, 200, self.text);
    assert.equal(self.body.user.userName, 'pat-holder');
  });

  it('checks expirationDate: in the future, an RFC 3339 date-time', async () => {
    assertInvalid(await server.api('POST', `${USERS}/${machineId}/pats`, { body: { expirationDate: '2001-01-01T00:00:00Z' } }), ['expirationDate'], {
      atLeast: true,
    });
    assertInvalid(await server.api('POST', `${USERS}/${machineId}/pats`, { body: { expirationDate: '2031-02-30' } }), ['expirationDate'], { atLeast: true });
    assertInvalid(await server.api('POST', `${USERS}/${machineId}/pats`, { body: { scope: 'all' } }), ['scope'], { atLeast: true });
    const expiring = await server.api('POST', `${USERS}/${machineId}/pats`, { body: { expirationDate: inDays(7) } });
    assert.equal(expiring.status, 200, expiring.text);
    secrets.push(expiring.body.token);
    const listed = await server.api('GET', `${USERS}/${machineId}/pats`);
    const entry = listed.body.result.find((p: { id: string }) => p.id === expiring.body.tokenId);
    assert.ok(Math.abs(Date.parse(entry.expirationDate) - Date.now() - 7 * 86_400_000) < 60_000);
  });

  it('an expired token is refused with 401', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/pats`, { body: { expirationDate: inDays(1) } });
    secrets.push(res.body.token);
    await server.running.db.query("UPDATE personal_access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [res.body.tokenId]);
    assertError(await server.api('GET', `${USERS}/${machineId}`, { token: res.body.token }), 401);
  });

  it('lists tokens without their values', async () => {
    const res = await server.api('GET', `${USERS}/${machineId}/pats`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.result.length >= 2);
    for (const pat of res.body.result) {
      assertDetails(pat.details, defaultOrgId);
      assert.deepEqual(
        Object.keys(pat).filter((k) => !['id', 'expirationDate', 'details'].includes(k)),
        [],
      );
    }
  });

  it('deleting a token makes it fail at once (401); deleting it again is 404', async () => {
    const res = await server.api('POST', `${USERS}/${machineId}/pats`);
    secrets.push(res.body.token);
    assert.equal((await server.api('DELETE', `${USERS}/${machineId}/pats/${res.body.tokenId}`)).status, 200);
    assertError(await server.api('GET', `${USERS}/${machineId}`, { token: res.body.token }), 401);
    assertError(await server.api('DELETE', `${USERS}/${machineId}/pats/${res.body.tokenId}`), 404);
  });

  it('is for machine users only and checks token, roles and user', async () => {
    const humanId = (await server.api('POST', `${USERS}/human`, { body: human('pat-human') })).body.userId;
    assertInvalid(await server.api('POST', `${USERS}/${humanId}/pats`), [], { atLeast: true });
    assertError(await server.api('POST', `${USERS}/${machineId}/pats`, { token: null }), 401);
    assertError(await server.api('POST', `${USERS}/${machineId}/pats`, { token: nobodyPat }), 403);
    assertError(await server.api('GET', `${USERS}/${machineId}/pats`, { token: nobodyPat }), 403);
    assertError(await server.api('POST', `${USERS}/31337/pats`), 404);
    assertError(await server.api('GET', `${USERS}/${otherOrgUserId}/pats`), 404);
  });
});

describe('GET, DELETE /management/v1/users/{userId}', () => {
  it('removing a machine user makes its PAT fail with 401 and removes its keys and memberships', async () => {
    const machineId = await addMachine('doomed');
    const pat = await addPat(machineId);
    const key = await server.api('POST', `${USERS}/${machineId}/keys`, { body: { type: 'KEY_TYPE_JSON' } });
    secrets.push(key.body.keyDetails);
    await addOrgMember(machineId, ['ORG_USER_MANAGER']);
    assert.equal((await server.api('GET', `${USERS}/${machineId}`, { token: pat })).status, 200);

    const removed = await server.api('DELETE', `${USERS}/${machineId}`);
    assert.equal(removed.status, 200, removed.text);
    assertDetails(removed.body.details, defaultOrgId);
    assertError(await server.api('GET', `${USERS}/${machineId}`, { token: pat }), 401);
    assertError(await server.api('GET', `${USERS}/${machineId}`), 404);
    assert.equal(await storedKey(server.running.db, machineId, key.body.keyId), undefined);
    const { rows } = await server.running.db.query('SELECT 1 FROM memberships WHERE user_id = $1', [machineId]);
    assert.equal(rows.length, 0);
    const events = await server.running.db.query<{ event_type: string }>(
      "SELECT event_type FROM events WHERE aggregate_id = $1 AND event_type = 'user.removed'",
      [machineId],
    );
    assert.equal(events.rows.length, 1);
    assertError(await server.api('DELETE', `${USERS}/${machineId}`), 404);
  });

  it('a user cannot remove itself (400)', async () => {
    const res = await server.api('DELETE', `${USERS}/${adminMachineId}`);
    assertInvalid(res, [], { atLeast: true });
    assert.match(res.body.message, /cannot remove itself/);
  });

  it('answers 401 without a token, 403 without the roles, 404 for unknown users and users of another org', async () => {
    const machineId = await addMachine('survivor');
    assertError(await server.api('DELETE', `${USERS}/${machineId}`, { token: null }), 401);
    assertError(await server.api('DELETE', `${USERS}/${machineId}`, { token: nobodyPat }), 403);
    assertError(await server.api('GET', `${USERS}/${machineId}`, { token: nobodyPat }), 403);
    assertError(await server.api('DELETE', `${USERS}/12345`), 404);
    assertError(await server.api('DELETE', `${USERS}/${otherOrgUserId}`), 404);
    assertError(await server.api('DELETE', `${USERS}/${machineId}`, { orgId: 'unknown-org' }), 404);
  });
});

describe('an ORG_USER_MANAGER', () => {
  let managerPat: string;

  before(async () => {
    const managerId = await addMachine('user-manager');
    await addOrgMember(managerId, ['ORG_USER_MANAGER']);
    managerPat = await addPat(managerId);
  });

  it('manages the users of its org: adds, issues credentials, removes', async () => {
    const created = await server.api('POST', `${USERS}/machine`, { body: { userName: 'managed', name: 'M' }, token: managerPat });
    assert.equal(created.status, 200, created.text);
    const pat = await server.api('POST', `${USERS}/${created.body.userId}/pats`, { token: managerPat });
    assert.equal(pat.status, 200, pat.text);
    secrets.push(pat.body.token);
    assert.equal((await server.api('DELETE', `${USERS}/${created.body.userId}`, { token: managerPat })).status, 200);
  });

  it('cannot act in another org (403)', async () => {
    assertError(await server.api('POST', `${USERS}/machine`, { body: { userName: 'x', name: 'x' }, token: managerPat, orgId: otherOrgId }), 403);
  });

  it('cannot take over a user holding roles it lacks: no credentials for, nor removal of, the IAM_OWNER admin (403)', async () => {
    assertError(await server.api('POST', `${USERS}/${adminMachineId}/pats`, { token: managerPat }), 403);
    assertError(await server.api('PUT', `${USERS}/${adminMachineId}/secret`, { token: managerPat }), 403);
    assertError(await server.api('POST', `${USERS}/${adminMachineId}/keys`, { body: { type: 'KEY_TYPE_JSON' }, token: managerPat }), 403);
    assertError(await server.api('DELETE', `${USERS}/${adminMachineId}`, { token: managerPat }), 403);
  });
});

describe('secrets are shown once', () => {
  it('no GET answer carries a secret, a PAT, a private key or a digest', async () => {
    const { rows } = await server.running.db.query<{ id: string }>("SELECT id FROM users WHERE org_id = $1 AND type = 'machine'", [defaultOrgId]);
    const texts: string[] = [];
    for (const { id } of rows) {
      texts.push(
        (await server.api('GET', `${USERS}/${id}`)).text,
        (await server.api('GET', `${USERS}/${id}/keys`)).text,
        (await server.api('GET', `${USERS}/${id}/pats`)).text,
      );
    }
    const all = texts.join('\n');
    assert.ok(secrets.length > 10);
    for (const secret of secrets) assert.ok(!all.includes(secret), 'a secret appeared in a GET answer');
    assert.ok(!/PRIVATE KEY|secret_?digest|password_?hash/i.test(all));
  });

  it('the event log holds no secret', async () => {
    const { rows } = await server.running.db.query<{ payload: unknown }>('SELECT payload FROM events');
    const all = JSON.stringify(rows);
    for (const secret of secrets) assert.ok(!all.includes(secret), 'a secret appeared in the event log');
    assert.ok(!all.includes('PRIVATE KEY'));
  });

  it('the server log holds no secret', () => {
    const log = server.logText();
    assert.match(log, /"msg":"request"/, 'the log captured the requests');
    for (const secret of [...secrets, server.pat]) assert.ok(!log.includes(secret), 'a secret appeared in the server log');
    assert.ok(!log.includes('PRIVATE KEY'));
  });
});
