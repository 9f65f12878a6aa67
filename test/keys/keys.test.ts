import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { seal, unseal } from '../../src/keys/sealing.ts';
import { MasterKeyMismatch, deriveKey, resolveMasterKey, verifyMasterKey } from '../../src/keys/master-key.ts';
import { ensureSigningKey, insertSigningKey, loadSigningKeys, orderForSigning, type SigningKey } from '../../src/keys/signing-keys.ts';
import { openTestDatabase, type TestDatabase } from '../support/stores.ts';

describe('sealing private keys (AES-256-GCM)', () => {
  const key = randomBytes(32);
  const plaintext = Buffer.from(JSON.stringify({ kty: 'RSA', d: 'secret-exponent' }));

  it('opens what it sealed with the same key and associated data', () => {
    const sealed = seal(key, plaintext, 'kid-1');
    assert.deepEqual(unseal(key, sealed, 'kid-1'), plaintext);
  });

  it('never writes the plaintext into the sealed value, and seals the same input differently each time', () => {
    const a = seal(key, plaintext, 'kid-1');
    const b = seal(key, plaintext, 'kid-1');
    assert.ok(!a.includes(Buffer.from('secret-exponent')));
    assert.notDeepEqual(a, b);
  });

  it('refuses to open with another key', () => {
    const sealed = seal(key, plaintext, 'kid-1');
    assert.throws(() => unseal(randomBytes(32), sealed, 'kid-1'));
  });

  it('refuses to open with other associated data (a ciphertext moved to another kid)', () => {
    const sealed = seal(key, plaintext, 'kid-1');
    assert.throws(() => unseal(key, sealed, 'kid-2'));
  });

  it('refuses a tampered, truncated or unknown-version value', () => {
    const sealed = seal(key, plaintext, 'kid-1');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    assert.throws(() => unseal(key, tampered, 'kid-1'));
    assert.throws(() => unseal(key, sealed.subarray(0, 20), 'kid-1'));
    const otherVersion = Buffer.from(sealed);
    otherVersion[0] = 2;
    assert.throws(() => unseal(key, otherVersion, 'kid-1'));
  });
});

describe('master key', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'portcullis-mk-'));
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates DATA_DIR/master.key (mode 0600) once and reads the same key afterwards', () => {
    const first = resolveMasterKey(undefined, dataDir);
    assert.equal(first.source, 'generated');
    assert.equal(first.key.length, 32);
    const path = join(dataDir, 'master.key');
    assert.ok(existsSync(path));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, 'utf8').trim(), first.key.toString('hex'));
    const second = resolveMasterKey(undefined, dataDir);
    assert.equal(second.source, 'file');
    assert.deepEqual(second.key, first.key);
  });

  it('prefers a configured MASTER_KEY over the file', () => {
    const configured = randomBytes(32);
    const resolved = resolveMasterKey(configured, dataDir);
    assert.equal(resolved.source, 'env');
    assert.deepEqual(resolved.key, configured);
  });

  it('derives different keys for different purposes, and the same key for the same purpose', () => {
    const master = randomBytes(32);
    assert.deepEqual(deriveKey(master, 'a'), deriveKey(master, 'a'));
    assert.notDeepEqual(deriveKey(master, 'a'), deriveKey(master, 'b'));
    assert.notDeepEqual(deriveKey(master, 'a'), master);
  });
});

describe('keys in the database', () => {
  let t: TestDatabase;
  before(async () => {
    t = await openTestDatabase();
  });
  after(async () => {
    await t?.cleanup();
  });

  it('verifyMasterKey accepts the same key twice and throws MasterKeyMismatch for another', async () => {
    await t.db.query('DELETE FROM master_key_check');
    const master = randomBytes(32);
    await verifyMasterKey(t.db, master);
    await verifyMasterKey(t.db, Buffer.from(master));
    await assert.rejects(verifyMasterKey(t.db, randomBytes(32)), (err: unknown) => {
      assert.ok(err instanceof MasterKeyMismatch);
      assert.match((err as Error).message, /MASTER_KEY/);
      return true;
    });
    // The stored check value is still the first key's.
    await verifyMasterKey(t.db, master);
  });

  it('ensureSigningKey called concurrently 3 times creates exactly one key', async () => {
    await t.db.query('DELETE FROM signing_keys');
    const sealingKey = randomBytes(32);
    await Promise.all([ensureSigningKey(t.db, sealingKey), ensureSigningKey(t.db, sealingKey), ensureSigningKey(t.db, sealingKey)]);
    const { rows } = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM signing_keys');
    assert.equal(Number(rows[0]!.n), 1);
    await ensureSigningKey(t.db, sealingKey);
    const again = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM signing_keys');
    assert.equal(Number(again.rows[0]!.n), 1);
  });

  it('stores the private key sealed, under its kid, and loadSigningKeys opens it', async () => {
    await t.db.query('DELETE FROM signing_keys');
    const sealingKey = randomBytes(32);
    const kid = await insertSigningKey(t.db, sealingKey, new Date());
    const { rows } = await t.db.query<{ private_jwk: Uint8Array; public_jwk: JWK }>('SELECT private_jwk, public_jwk FROM signing_keys WHERE kid = $1', [kid]);
    const stored = Buffer.from(rows[0]!.private_jwk);
    assert.ok(!stored.toString('latin1').includes('"d"'), 'private JWK is not in clear');
    const publicJwk = typeof rows[0]!.public_jwk === 'string' ? (JSON.parse(rows[0]!.public_jwk) as JWK) : rows[0]!.public_jwk;
    assert.equal(publicJwk.kid, kid);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.ok(!(member in publicJwk), `public_jwk has no ${member}`);

    const keys = await loadSigningKeys(t.db, sealingKey, 3600);
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.kid, kid);
    assert.equal(keys[0]!.privateJwk.kid, kid);
    assert.equal(keys[0]!.privateJwk.alg, 'RS256');
    assert.equal(typeof keys[0]!.privateJwk.d, 'string');
    await assert.rejects(loadSigningKeys(t.db, randomBytes(32), 3600), 'another sealing key cannot open it');
  });

  it('loadSigningKeys drops a key retired longer ago than retainFor and keeps the more recently retired one', async () => {
    await t.db.query('DELETE FROM signing_keys');
    const sealingKey = randomBytes(32);
    const now = new Date();
    const hour = 3600_000;
    const current = await insertSigningKey(t.db, sealingKey, new Date(now.getTime() - hour));
    const recent = await insertSigningKey(t.db, sealingKey, new Date(now.getTime() - 5 * hour));
    const old = await insertSigningKey(t.db, sealingKey, new Date(now.getTime() - 9 * hour));
    await t.db.query('UPDATE signing_keys SET retires_at = $2 WHERE kid = $1', [recent, new Date(now.getTime() - hour / 2)]);
    await t.db.query('UPDATE signing_keys SET retires_at = $2 WHERE kid = $1', [old, new Date(now.getTime() - 2 * hour)]);

    const keys = await loadSigningKeys(t.db, sealingKey, 3600, now);
    assert.deepEqual(
      keys.map((k) => k.kid),
      [current, recent],
    );

    const longer = await loadSigningKeys(t.db, sealingKey, 3 * 3600, now);
    assert.deepEqual(
      longer.map((k) => k.kid),
      [current, recent, old],
    );
  });
});

describe('order of signing keys', () => {
  const now = new Date('2030-01-01T12:00:00Z');
  const at = (hours: number) => new Date(now.getTime() + hours * 3600_000);
  const key = (kid: string, activatesAt: Date, retiresAt: Date | null = null): SigningKey => ({
    kid,
    alg: 'RS256',
    privateJwk: { kid },
    activatesAt,
    retiresAt,
  });

  it('puts the current key first, then the next (future activation), then the previous (retired)', () => {
    const previous = key('previous', at(-48), at(-24));
    const current = key('current', at(-24));
    const next = key('next', at(+1));
    assert.deepEqual(
      orderForSigning([previous, next, current], now).map((k) => k.kid),
      ['current', 'next', 'previous'],
    );
    assert.deepEqual(
      orderForSigning([next, previous, current], now).map((k) => k.kid),
      ['current', 'next', 'previous'],
    );
  });

  it('signs with the newest active key when two are active, and orders next and previous by nearness', () => {
    const keys = [
      key('older-current', at(-10)),
      key('newest-current', at(-1)),
      key('later-next', at(+5)),
      key('sooner-next', at(+2)),
      key('long-retired', at(-90), at(-50)),
      key('just-retired', at(-60), at(-2)),
      key('retires-later', at(-20), at(+3)),
    ];
    assert.deepEqual(
      orderForSigning(keys, now).map((k) => k.kid),
      ['newest-current', 'older-current', 'retires-later', 'sooner-next', 'later-next', 'just-retired', 'long-retired'],
    );
  });

  it('treats a key activating exactly now as current and one retiring exactly now as previous', () => {
    const keys = [key('retiring-now', at(-5), now), key('activating-now', now)];
    assert.deepEqual(
      orderForSigning(keys, now).map((k) => k.kid),
      ['activating-now', 'retiring-now'],
    );
  });
});
