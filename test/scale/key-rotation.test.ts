import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { testServer, type InProcessServer } from '../support/server.ts';
import { request as http, type ApiResponse as HttpResult } from '../support/api.ts';
import { postForm } from '../support/cluster.ts';
import { deriveKey, resolveMasterKey } from '../../src/keys/master-key.ts';
import { advanceSigningKeys } from '../../src/keys/rotation.ts';
import { listSigningKeys, type SigningKeyView } from '../../src/queries/signing-keys.ts';
import { loadSigningKeys } from '../../src/keys/signing-keys.ts';

// docs/api/signing-keys.md: the JWKS publishes the next, current
// and previous keys; keys rotate on demand (IAM_OWNER) and on schedule
// (KEY_ROTATION_INTERVAL); a rotated-out key stays published until every
// token it signed has expired; private parts never leave the database sealed.

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
const SECOND = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface World {
  server: InProcessServer;
  adminPat: string;
  sealingKey: Buffer;
  retainFor: number;
  api(method: string, path: string, options?: { body?: unknown; token?: string | null }): Promise<HttpResult>;
  jwks(): Promise<Array<Record<string, unknown>>>;
}

async function startWorld(env: Record<string, string> = {}): Promise<World> {
  const server = await testServer({ env });
  const adminPat = readFileSync(join(server.config.dataDir, 'admin.pat'), 'utf8').trim();
  const master = resolveMasterKey(server.config.masterKey, server.config.dataDir);
  return {
    server,
    adminPat,
    sealingKey: deriveKey(master.key, 'signing key sealing'),
    retainFor: Math.max(server.config.idTokenLifetime, server.config.accessTokenLifetime),
    api(method, path, options = {}) {
      const token = options.token === undefined ? adminPat : options.token;
      return http(`${server.url}${path}`, {
        method,
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
    },
    async jwks() {
      const res = await http(`${server.url}/oauth/v2/keys`);
      assert.equal(res.status, 200, res.text);
      return res.json.keys;
    },
  };
}

const kids = (keys: Array<{ kid?: unknown }>) => keys.map((k) => k.kid as string);
const statuses = (keys: SigningKeyView[]) => keys.map((k) => k.status);

describe('signing keys of one node: on-demand rotation', () => {
  let w: World;
  let machine: { userId: string; clientId: string; clientSecret: string };
  let firstKeys: SigningKeyView[];
  let rotatedKeys: SigningKeyView[];
  let tokenBefore: string;

  const jwtAccessToken = async (): Promise<string> => {
    const res = await postForm(`${w.server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: 'openid' }, machine);
    assert.equal(res.status, 200, res.text);
    const token = res.json.access_token as string;
    assert.equal(decodeProtectedHeader(token).typ, 'at+jwt', 'a JWT access token');
    return token;
  };

  before(async () => {
    w = await startWorld();
    const created = await w.api('POST', '/management/v1/users/machine', {
      body: { userName: 'signer', name: 'Signer', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' },
    });
    assert.equal(created.status, 200, created.text);
    const secret = await w.api('PUT', `/management/v1/users/${created.json.userId}/secret`, { body: {} });
    assert.equal(secret.status, 200, secret.text);
    machine = { userId: created.json.userId, clientId: secret.json.clientId, clientSecret: secret.json.clientSecret };
  });

  after(async () => {
    await w?.server.stop();
  });

  test('after the first start the JWKS lists the current key, then the next key, with distinct kids', async () => {
    const listed = await w.api('GET', '/admin/v1/signing_keys');
    assert.equal(listed.status, 200, listed.text);
    firstKeys = listed.json.result;
    assert.deepEqual(statuses(firstKeys), ['current', 'next']);
    assert.notEqual(firstKeys[0]!.kid, firstKeys[1]!.kid);
    for (const key of firstKeys) assert.equal(key.alg, 'RS256');
    assert.ok(Date.parse(firstKeys[1]!.activatesAt) > Date.now(), 'the next key activates in the future');
    assert.equal(firstKeys[0]!.retiresAt, null);

    const published = await w.jwks();
    assert.deepEqual(kids(published), kids(firstKeys), 'the JWKS publishes the same keys in the same order');
    for (const key of published) {
      assert.equal(key.kty, 'RSA');
      assert.equal(key.alg, 'RS256');
      assert.equal(key.use, 'sig');
    }
  });

  test('a token issued before the rotation is signed with the current key', async () => {
    tokenBefore = await jwtAccessToken();
    assert.equal(decodeProtectedHeader(tokenBefore).kid, firstKeys[0]!.kid);
  });

  test('rotating answers the new schedule: the former next key is current, a new next key, the old key previous', async () => {
    const rotated = await w.api('POST', '/admin/v1/signing_keys/_rotate', { body: {} });
    assert.equal(rotated.status, 200, rotated.text);
    assert.ok(rotated.json.details?.sequence, `the rotation answers write details: ${rotated.text}`);
    rotatedKeys = rotated.json.result;
    assert.deepEqual(statuses(rotatedKeys), ['current', 'next', 'previous']);
    assert.equal(rotatedKeys[0]!.kid, firstKeys[1]!.kid, 'the former next key is current');
    assert.ok(!kids(firstKeys).includes(rotatedKeys[1]!.kid), 'the next key is new');
    assert.equal(rotatedKeys[2]!.kid, firstKeys[0]!.kid, 'the former current key is previous');
    assert.ok(rotatedKeys[2]!.retiresAt && Date.parse(rotatedKeys[2]!.retiresAt) <= Date.now(), 'the previous key has retired');
    assert.ok(Date.parse(rotatedKeys[0]!.activatesAt) <= Date.now(), 'the current key has activated');
    assert.equal(rotatedKeys[2]!.retiresAt, rotatedKeys[0]!.activatesAt, 'the old key retired when the new one started');
    assert.equal(
      Date.parse(rotatedKeys[1]!.activatesAt) - Date.parse(rotatedKeys[0]!.activatesAt),
      w.server.config.keyRotationInterval * SECOND,
      'the new next key is scheduled one KEY_ROTATION_INTERVAL later',
    );

    const listed = await w.api('GET', '/admin/v1/signing_keys');
    assert.deepEqual(listed.json.result, rotatedKeys, 'GET lists what _rotate answered');
  });

  test('after the rotation the JWKS lists the new current key first, then the new next key, then the previous key', async () => {
    assert.deepEqual(kids(await w.jwks()), kids(rotatedKeys));
  });

  test('a token signed before the rotation still verifies with the JWKS published after it, and is still active', async () => {
    const { payload, protectedHeader } = await jwtVerify(tokenBefore, createRemoteJWKSet(new URL(`${w.server.url}/oauth/v2/keys`)), {
      issuer: w.server.issuer,
      typ: 'at+jwt',
    });
    assert.equal(protectedHeader.kid, firstKeys[0]!.kid);
    assert.equal(payload.sub, machine.userId);
    const introspected = await postForm(`${w.server.url}/oauth/v2/introspect`, { token: tokenBefore }, machine);
    assert.equal(introspected.status, 200, introspected.text);
    assert.equal(introspected.json.active, true, `the rotation does not end the token: ${introspected.text}`);
  });

  test('a token signed after the rotation carries the new current kid and verifies with the JWKS', async () => {
    const token = await jwtAccessToken();
    const { protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(`${w.server.url}/oauth/v2/keys`)), {
      issuer: w.server.issuer,
      typ: 'at+jwt',
    });
    assert.equal(protectedHeader.kid, rotatedKeys[0]!.kid);
  });

  test('no private key material appears in the key list or the JWKS', async () => {
    const listed = await w.api('GET', '/admin/v1/signing_keys');
    const jwks = await http(`${w.server.url}/oauth/v2/keys`);
    for (const key of listed.json.result as Array<Record<string, unknown>>) {
      assert.deepEqual(Object.keys(key).sort(), ['activatesAt', 'alg', 'kid', 'retiresAt', 'status']);
    }
    for (const key of jwks.json.keys as Array<Record<string, unknown>>) {
      for (const member of PRIVATE_MEMBERS) assert.ok(!(member in key), `JWKS key ${String(key.kid)} has no "${member}"`);
    }
    // Not even the values, under any name.
    const secrets = await loadSigningKeys(w.server.running.db, w.sealingKey, w.retainFor);
    assert.equal(secrets.length, 3);
    for (const key of secrets) {
      for (const member of PRIVATE_MEMBERS) {
        const value = key.privateJwk[member as 'd'];
        assert.equal(typeof value, 'string');
        assert.ok(!listed.text.includes(value!), `the key list does not contain ${member} of ${key.kid}`);
        assert.ok(!jwks.text.includes(value!), `the JWKS does not contain ${member} of ${key.kid}`);
      }
    }
  });

  test('rotating and listing need IAM_OWNER: 403 for a machine user’s PAT without it, 401 without a token', async () => {
    const created = await w.api('POST', '/management/v1/users/machine', { body: { userName: 'bystander', name: 'Bystander' } });
    assert.equal(created.status, 200, created.text);
    const pat = await w.api('POST', `/management/v1/users/${created.json.userId}/pats`, { body: {} });
    assert.equal(pat.status, 200, pat.text);
    const token = pat.json.token as string;

    const before = kids(await w.jwks());
    const rotate = await w.api('POST', '/admin/v1/signing_keys/_rotate', { body: {}, token });
    assert.equal(rotate.status, 403, rotate.text);
    assert.equal(rotate.json.code, 7);
    const list = await w.api('GET', '/admin/v1/signing_keys', { token });
    assert.equal(list.status, 403, list.text);

    const anonymous = await w.api('POST', '/admin/v1/signing_keys/_rotate', { body: {}, token: null });
    assert.equal(anonymous.status, 401, anonymous.text);
    assert.equal(anonymous.json.code, 16);
    const forged = await w.api('POST', '/admin/v1/signing_keys/_rotate', { body: {}, token: 'not-a-token' });
    assert.equal(forged.status, 401, forged.text);
    assert.equal((await w.api('GET', '/admin/v1/signing_keys', { token: null })).status, 401);

    assert.deepEqual(kids(await w.jwks()), before, 'the refused calls rotated nothing');
  });
});

describe('signing keys of one node: automatic rotation (KEY_ROTATION_INTERVAL=60)', () => {
  const INTERVAL = 60;
  let w: World;

  before(async () => {
    w = await startWorld({ KEY_ROTATION_INTERVAL: String(INTERVAL) });
  });

  after(async () => {
    await w?.server.stop();
  });

  test('the next key is scheduled one interval after the current key started', async () => {
    const keys = await listSigningKeys(w.server.running.db, w.retainFor);
    assert.deepEqual(statuses(keys), ['current', 'next']);
    assert.equal(Date.parse(keys[1]!.activatesAt) - Date.parse(keys[0]!.activatesAt), INTERVAL * SECOND);
  });

  test('before the next key’s activation time the schedule changes nothing; once it has passed, the old current key retires and a new next key is scheduled', async () => {
    const db = w.server.running.db;
    const [current, next] = await listSigningKeys(db, w.retainFor);
    const activation = Date.parse(next!.activatesAt);

    assert.equal(await advanceSigningKeys(db, w.sealingKey, { interval: INTERVAL, now: new Date(activation - SECOND) }), false, 'nothing due a second before');
    assert.deepEqual(kids(await listSigningKeys(db, w.retainFor, new Date(activation - SECOND))), [current!.kid, next!.kid]);

    const later = new Date(activation + SECOND);
    assert.equal(await advanceSigningKeys(db, w.sealingKey, { interval: INTERVAL, now: later }), true, 'housekeeping due a second after');
    const keys = await listSigningKeys(db, w.retainFor, later);
    assert.deepEqual(statuses(keys), ['current', 'next', 'previous']);
    assert.equal(keys[0]!.kid, next!.kid, 'the former next key is current');
    assert.equal(keys[2]!.kid, current!.kid, 'the former current key is previous');
    assert.equal(keys[2]!.retiresAt, new Date(activation).toISOString(), 'it retired when its successor started');
    assert.ok(![current!.kid, next!.kid].includes(keys[1]!.kid), 'a new next key');
    assert.equal(Date.parse(keys[1]!.activatesAt), activation + INTERVAL * SECOND, 'the new next key takes over one interval later');

    assert.equal(await advanceSigningKeys(db, w.sealingKey, { interval: INTERVAL, now: later }), false, 'a second run at the same moment changes nothing');
    const { rows } = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM signing_keys');
    assert.equal(Number(rows[0]!.n), 3);
  });

  test('a retired key stays listed until retiresAt plus the longest token lifetime, then leaves the list and the loaded keys', async () => {
    const db = w.server.running.db;
    const { rows } = await db.query<{ kid: string; retires_at: Date }>('SELECT kid, retires_at FROM signing_keys WHERE retires_at IS NOT NULL');
    assert.equal(rows.length, 1, 'one retired key');
    const retired = rows[0]!;
    const gone = new Date(retired.retires_at).getTime() + w.retainFor * SECOND;

    const justBefore = new Date(gone - SECOND);
    assert.ok(kids(await listSigningKeys(db, w.retainFor, justBefore)).includes(retired.kid), 'still listed a second before');
    assert.ok(kids(await loadSigningKeys(db, w.sealingKey, w.retainFor, justBefore)).includes(retired.kid), 'still loaded a second before');

    const justAfter = new Date(gone + SECOND);
    const listed = await listSigningKeys(db, w.retainFor, justAfter);
    assert.ok(!kids(listed).includes(retired.kid), 'not listed a second after');
    assert.equal(listed.length, 2);
    assert.ok(!kids(await loadSigningKeys(db, w.sealingKey, w.retainFor, justAfter)).includes(retired.kid), 'not loaded a second after');
  });

  test('a node performs a due rotation by itself and publishes it within 5 seconds', async () => {
    const db = w.server.running.db;
    // Bring the schedule back to "now" and make the next key due: as if the
    // interval had passed while the node was running.
    const now = Date.now();
    const [due, later] = await db.transaction(async (tx) => {
      await tx.query('DELETE FROM signing_keys WHERE retires_at IS NOT NULL');
      const pending = await tx.query<{ kid: string }>('SELECT kid FROM signing_keys ORDER BY activates_at');
      const [first, second] = pending.rows.map((r) => r.kid);
      await tx.query('UPDATE signing_keys SET activates_at = $2 WHERE kid = $1', [first, new Date(now - 2 * SECOND)]);
      await tx.query('UPDATE signing_keys SET activates_at = $2 WHERE kid = $1', [second, new Date(now - SECOND)]);
      return [first!, second!];
    });
    // `later` is now the newest active key, `due` the older one: the node
    // must retire `due` and schedule a new next key on its own.

    const started = Date.now();
    let published: string[] = [];
    while (Date.now() - started < 3 * 5000) {
      published = kids(await w.jwks());
      if (published.length === 3 && published[0] === later) break;
      await sleep(200);
    }
    const elapsed = Date.now() - started;
    assert.equal(published[0], later, `the newest active key signs: ${JSON.stringify(published)}`);
    assert.equal(published.length, 3, `current, a new next key, previous: ${JSON.stringify(published)}`);
    assert.ok(![due, later].includes(published[1]!), 'a new next key');
    assert.equal(published[2], due, 'the older key is previous');
    assert.ok(elapsed < 5000, `published only after ${elapsed} ms`);

    const keys = await listSigningKeys(db, w.retainFor);
    assert.deepEqual(statuses(keys), ['current', 'next', 'previous']);
    assert.equal(Date.parse(keys[1]!.activatesAt), now - SECOND + INTERVAL * SECOND, 'the new next key takes over one interval after the current one started');
  });
});
