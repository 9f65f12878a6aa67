import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, decodeMasterKey, loadConfig } from '../../config/load.ts';
import { PASSWORD_COMPLEXITY_POLICY } from '../../src/domain/policies/password-complexity.ts';
import { firstStart, type FirstStartSettings } from '../../src/commands/first-start.ts';
import { authenticatePassword } from '../../src/queries/authenticate-password.ts';
import type { Queryable } from '../../src/storage/database.ts';
import { deriveKey } from '../../src/keys/master-key.ts';
import { openTestDatabase, type TestDatabase } from '../support/stores.ts';
import { call } from '../support/api.ts';
import { prepareEnvironment, testServer, type TestServer, type TestEnvironment } from '../support/server.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';

// docs/operations.md, First start: what the first start creates, that it
// happens once, and that a bad ADMIN_PASSWORD stops the start without
// leaking the password.

/** The settings the admin API tests start with (test/support/server.ts adds port, folder and stores). */
const ADMIN_ENV = { INSTANCE_DOMAIN: 'example.test', SHUTDOWN_TIMEOUT: '2' };

/** The real server in this process with exactly `env`: for the first start itself. */
function startWith(env: Record<string, string>): Promise<RunningServer> {
  return startServer(loadConfig(env), createLogger('silent'));
}

const TABLES = ['instance', 'orgs', 'org_domains', 'users', 'memberships', 'personal_access_tokens', 'machine_keys', 'events'];

async function counts(db: Queryable): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    result[table] = rows[0]!.n;
  }
  return result;
}

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

function setupBody(): object {
  const t = randomBytes(5).toString('hex');
  return {
    org: { name: `Org ${t}`, domain: `${t}.example.com` },
    human: { userName: `u_${t}`, profile: { firstName: 'Ada', lastName: 'Lovelace' }, email: { email: `ada@${t}.example.com` } },
  };
}

function settingsFor(dataDir: string, secretKey: Buffer): FirstStartSettings {
  return { instanceDomain: 'example.test', passwordComplexity: PASSWORD_COMPLEXITY_POLICY, instanceOrgName: 'Default', dataDir, secretKey };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'portcullis-first-start-'));
}

describe('first start with a generated admin password', () => {
  let environment: TestEnvironment;
  let running: RunningServer;
  let dataDir: string;
  let secretKey: Buffer;

  before(async () => {
    environment = await prepareEnvironment(ADMIN_ENV);
    dataDir = environment.dataDir;
    running = await startWith(environment.env);
    const master = environment.env.MASTER_KEY ?? readFileSync(join(dataDir, 'master.key'), 'utf8');
    secretKey = deriveKey(decodeMasterKey(master), 'secret digests');
  });
  after(async () => {
    await running?.stop();
    await environment?.cleanup();
  });

  const file = (name: string) => join(dataDir, name);

  it('writes admin.pat, admin-key.json and admin.password into DATA_DIR, each mode 0600', () => {
    for (const name of ['admin.pat', 'admin-key.json', 'admin.password']) {
      assert.ok(existsSync(file(name)), `${name} missing`);
      assert.equal(modeOf(file(name)).toString(8), '600', name);
    }
  });

  it('admin.pat holds one generated token of [A-Za-z0-9_-]', () => {
    assert.match(readFileSync(file('admin.pat'), 'utf8'), /^[A-Za-z0-9_-]{43}\n?$/);
  });

  it('admin-key.json is a service account key of the admin machine user whose public part is the machine_keys row', async () => {
    const keyFile = JSON.parse(readFileSync(file('admin-key.json'), 'utf8'));
    assert.deepEqual(Object.keys(keyFile).sort(), ['key', 'keyId', 'type', 'userId']);
    assert.equal(keyFile.type, 'serviceaccount');
    assert.ok(keyFile.key.startsWith('-----BEGIN RSA PRIVATE KEY-----'), keyFile.key.slice(0, 40));

    const { rows: users } = await running.db.query<{ id: string; type: string }>("SELECT id, type FROM users WHERE user_name = 'portcullis-admin'");
    assert.deepEqual(users, [{ id: keyFile.userId, type: 'machine' }]);

    const { rows: keys } = await running.db.query<{ user_id: string; public_jwk: unknown }>('SELECT user_id, public_jwk FROM machine_keys WHERE id = $1', [
      keyFile.keyId,
    ]);
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.user_id, keyFile.userId);
    const stored = (typeof keys[0]!.public_jwk === 'string' ? JSON.parse(keys[0]!.public_jwk) : keys[0]!.public_jwk) as Record<string, string>;
    const derived = createPublicKey(keyFile.key).export({ format: 'jwk' }) as Record<string, string>;
    assert.equal(stored.kty, 'RSA');
    assert.equal(stored.n, derived.n);
    assert.equal(stored.e, derived.e);
    assert.equal(stored.kid, keyFile.keyId);
    assert.equal(stored.d, undefined, 'no private part is stored');
  });

  it('the PAT authenticates at the admin API as IAM_OWNER: an org setup with it succeeds', async () => {
    const pat = readFileSync(file('admin.pat'), 'utf8').trim();
    const response = await call(`${running.url}/admin/v1/orgs/_setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${pat}` },
      body: JSON.stringify(setupBody()),
    });
    assert.equal(response.status, 200, response.text);
  });

  it('the admin machine user and the admin human both hold IAM_OWNER; the human also owns the first org', async () => {
    const { rows: instance } = await running.db.query<{ id: string; default_org_id: string }>('SELECT id, default_org_id FROM instance');
    assert.equal(instance.length, 1);
    const { rows: org } = await running.db.query<{ name: string; domain: string }>(
      'SELECT o.name, d.domain FROM orgs o JOIN org_domains d ON d.org_id = o.id AND d.is_primary WHERE o.id = $1',
      [instance[0]!.default_org_id],
    );
    assert.deepEqual(org, [{ name: 'Default', domain: 'default.example.test' }]);

    const { rows } = await running.db.query<{ user_name: string; type: string; org_id: string; scope: string; scope_id: string; roles: string[] }>(
      `SELECT u.user_name, u.type, u.org_id, m.scope, m.scope_id, m.roles FROM users u JOIN memberships m ON m.user_id = u.id
        WHERE u.user_name IN ('admin', 'portcullis-admin') ORDER BY u.user_name, m.scope`,
    );
    const instanceId = instance[0]!.id;
    const orgId = instance[0]!.default_org_id;
    assert.deepEqual(
      rows.map((r) => ({ ...r, roles: [...r.roles] })),
      [
        { user_name: 'admin', type: 'human', org_id: orgId, scope: 'instance', scope_id: instanceId, roles: ['IAM_OWNER'] },
        { user_name: 'admin', type: 'human', org_id: orgId, scope: 'org', scope_id: orgId, roles: ['ORG_OWNER'] },
        { user_name: 'portcullis-admin', type: 'machine', org_id: orgId, scope: 'instance', scope_id: instanceId, roles: ['IAM_OWNER'] },
      ],
    );
  });

  it('the admin human admin@default.example.test logs in with the password from admin.password', async () => {
    const password = readFileSync(file('admin.password'), 'utf8').trim();
    assert.ok(password.length >= 8);
    const { rows } = await running.db.query<{ id: string }>("SELECT id FROM users WHERE user_name = 'admin' AND type = 'human'");
    assert.equal(await authenticatePassword(running.db, 'admin@default.example.test', password), rows[0]!.id);
    assert.equal(await authenticatePassword(running.db, 'admin@default.example.test', `${password}x`), undefined);
  });

  it('no credential reaches the event log or the database in the clear', async () => {
    const password = readFileSync(file('admin.password'), 'utf8').trim();
    const pat = readFileSync(file('admin.pat'), 'utf8').trim();
    const { rows } = await running.db.query<{ payload: string }>('SELECT payload::text AS payload FROM events');
    const log = rows.map((r) => r.payload).join('\n');
    for (const secret of [password, pat, '$argon2', 'PRIVATE KEY']) assert.ok(!log.includes(secret), `event log contains ${secret.slice(0, 8)}…`);
    const { rows: tokens } = await running.db.query<{ digest: Uint8Array }>('SELECT digest FROM personal_access_tokens');
    for (const token of tokens) assert.ok(!Buffer.from(token.digest).toString('utf8').includes(pat));
  });

  it('calling firstStart again on the same database returns undefined, writes no file and creates nothing', async () => {
    const before = await counts(running.db);
    const otherDir = tempDir();
    try {
      const result = await firstStart(running.db, settingsFor(otherDir, secretKey));
      assert.equal(result, undefined);
      assert.deepEqual(readdirSync(otherDir), []);
      assert.deepEqual(await counts(running.db), before);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('a second start on the same database changes nothing: same files, same rows, same PAT', async () => {
    const files = ['admin.pat', 'admin-key.json', 'admin.password'].map((name) => readFileSync(file(name), 'utf8'));
    const pat = files[0]!.trim();
    const before = await counts(running.db);
    await running.stop();
    running = await startWith(environment.env);
    assert.deepEqual(
      ['admin.pat', 'admin-key.json', 'admin.password'].map((name) => readFileSync(file(name), 'utf8')),
      files,
    );
    assert.deepEqual(await counts(running.db), before);
    const response = await call(`${running.url}/admin/v1/orgs/_setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${pat}` },
      body: JSON.stringify(setupBody()),
    });
    assert.equal(response.status, 200, response.text);
  });
});

describe('first start with ADMIN_PASSWORD and INSTANCE_ORG_NAME', () => {
  let server: TestServer;
  const password = 'Correct-Horse-Battery-9';

  before(async () => {
    server = await testServer({ env: { ADMIN_PASSWORD: password, INSTANCE_ORG_NAME: 'Wayne Enterprises' } });
  });
  after(async () => {
    await server?.stop();
  });

  it('the admin logs in with ADMIN_PASSWORD as admin@{first org domain}, and no admin.password file is written', async () => {
    assert.equal(existsSync(join(server.dataDir, 'admin.password')), false);
    assert.ok(existsSync(join(server.dataDir, 'admin.pat')));
    assert.ok(existsSync(join(server.dataDir, 'admin-key.json')));
    const { rows } = await server.running.db.query<{ id: string }>("SELECT id FROM users WHERE user_name = 'admin' AND type = 'human'");
    assert.equal(await authenticatePassword(server.running.db, 'admin@wayne-enterprises.example.test', password), rows[0]!.id);
    const { rows: orgs } = await server.running.db.query<{ name: string }>('SELECT name FROM orgs');
    assert.deepEqual(orgs, [{ name: 'Wayne Enterprises' }]);
  });
});

describe('first start, concurrently', () => {
  let store: TestDatabase;
  const dirs: string[] = [];

  before(async () => {
    store = await openTestDatabase();
  });
  after(async () => {
    await store?.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('three concurrent first starts on a fresh database create exactly one instance, one org and one set of credentials', async () => {
    const secretKey = randomBytes(32);
    dirs.push(tempDir(), tempDir(), tempDir());
    const results = await Promise.all(dirs.map((dir) => firstStart(store.db, settingsFor(dir, secretKey))));
    const created = results.filter((r) => r !== undefined);
    assert.equal(created.length, 1, 'exactly one call creates the instance');
    assert.equal(created[0]!.adminLoginName, 'admin@default.example.test');

    const rows = await counts(store.db);
    assert.equal(rows.instance, 1);
    assert.equal(rows.orgs, 1);
    assert.equal(rows.users, 2, 'one admin human, one admin machine user');
    assert.equal(rows.personal_access_tokens, 1);
    assert.equal(rows.machine_keys, 1);

    const withFiles = dirs.filter((dir) => readdirSync(dir).length > 0);
    assert.equal(withFiles.length, 1, 'only the creating call writes credential files');
    assert.deepEqual(readdirSync(withFiles[0]!).sort(), ['admin-key.json', 'admin.password', 'admin.pat']);
  });
});

describe('first start with an ADMIN_PASSWORD that breaks the password policy', () => {
  let environment: TestEnvironment;
  const password = 'abcdefghij';

  before(async () => {
    environment = await prepareEnvironment({ ...ADMIN_ENV, PASSWORD_MIN_LENGTH: '12', ADMIN_PASSWORD: password });
  });
  after(async () => {
    await environment?.cleanup();
  });

  it('startServer rejects with a ConfigError naming ADMIN_PASSWORD, without the password, and writes no credentials', async () => {
    await assert.rejects(startWith(environment.env), (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected ConfigError, got ${(err as Error)?.name}: ${(err as Error)?.message}`);
      assert.match(err.message, /ADMIN_PASSWORD/);
      assert.ok(!err.message.includes(password), err.message);
      return true;
    });
    for (const name of ['admin.pat', 'admin-key.json', 'admin.password']) assert.equal(existsSync(join(environment.dataDir, name)), false, name);
  });
});
