import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { argon2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { availableParallelism } from 'node:os';
import { MAX_WAITING, hashPassword, verifyPassword } from '../../src/security/passwords.ts';
import { Unavailable } from '../../src/domain/errors.ts';
import { digestsEqual, generateSecret, secretDigest } from '../../src/security/secrets.ts';

describe('password hashing (argon2id)', () => {
  // Hashes stored before the switch to @node-rs/argon2 were computed by
  // node:crypto (OpenSSL); both must agree on every byte, both ways.
  const opensslArgon2id = (password: string, salt: Buffer) =>
    promisify(argon2)('argon2id', { message: password, nonce: salt, memory: 19456, passes: 2, parallelism: 1, tagLength: 32 });
  const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

  it('verifies a hash computed by node:crypto (OpenSSL), and computes the tag node:crypto computes', async () => {
    const salt = randomBytes(16);
    const stored = `$argon2id$v=19$m=19456,t=2,p=1$${b64(salt)}$${b64(await opensslArgon2id('S3cure-Passw0rd!', salt))}`;
    assert.equal(await verifyPassword('S3cure-Passw0rd!', stored), true);
    assert.equal(await verifyPassword('S3cure-Passw0rd?', stored), false);

    const ours = await hashPassword('An0ther-Passw0rd');
    const [, , , , saltB64, tagB64] = ours.split('$');
    assert.equal(b64(await opensslArgon2id('An0ther-Passw0rd', Buffer.from(saltB64!, 'base64'))), tagB64);
  });

  it('writes a PHC string with the OWASP parameters and a fresh salt each time', async () => {
    const [a, b] = await Promise.all([hashPassword('S3cure-Passw0rd!'), hashPassword('S3cure-Passw0rd!')]);
    assert.ok(a.startsWith('$argon2id$v=19$m=19456,t=2,p=1$'), a);
    assert.match(a, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.notEqual(a, b);
    assert.ok(!a.includes('S3cure'));
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('S3cure-Passw0rd!');
    assert.equal(await verifyPassword('S3cure-Passw0rd!', hash), true);
    assert.equal(await verifyPassword('S3cure-Passw0rd?', hash), false);
    assert.equal(await verifyPassword('s3cure-passw0rd!', hash), false);
    assert.equal(await verifyPassword('', hash), false);
  });

  it('an unknown user (no hash) never verifies, whatever the password', async () => {
    assert.equal(await verifyPassword('anything', undefined), false);
    assert.equal(await verifyPassword('anything', null), false);
    assert.equal(await verifyPassword('', undefined), false);
  });

  it('a malformed or foreign hash never verifies', async () => {
    assert.equal(await verifyPassword('x', ''), false);
    assert.equal(await verifyPassword('x', '$2b$10$abcdefghijklmnopqrstuv'), false);
    assert.equal(await verifyPassword('x', 'x'), false);
  });

  it('a flood beyond the bounded waiting line is refused at once with Unavailable (retry after 1 s), and every admitted check still answers', async () => {
    const hash = await hashPassword('S3cure-Passw0rd!');
    const flood = MAX_WAITING + availableParallelism() + 20;
    const outcomes = await Promise.allSettled(Array.from({ length: flood }, () => verifyPassword('S3cure-Passw0rd!', hash)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    const answered = outcomes.filter((o) => o.status === 'fulfilled');
    assert.ok(refused.length >= 20, `${refused.length} of ${flood} refused`);
    for (const o of refused) {
      assert.ok(o.reason instanceof Unavailable, String(o.reason));
      assert.equal(o.reason.retryAfter, 1);
    }
    for (const o of answered) assert.equal(o.value, true);
    // The line empties again: the next check runs as usual.
    assert.equal(await verifyPassword('S3cure-Passw0rd!', hash), true);
  });

  it('non-ASCII passwords round-trip', async () => {
    const hash = await hashPassword('Pässwörd-🔑');
    assert.equal(await verifyPassword('Pässwörd-🔑', hash), true);
    assert.equal(await verifyPassword('Passwort-🔑', hash), false);
  });
});

describe('generated secrets and their digests', () => {
  it('a generated secret has 43 characters of [A-Za-z0-9_-] and never repeats', () => {
    const secrets = Array.from({ length: 200 }, () => generateSecret());
    for (const secret of secrets) assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(new Set(secrets).size, secrets.length);
  });

  it('the digest is deterministic per key, differs across keys and across secrets', () => {
    const key = randomBytes(32);
    const other = randomBytes(32);
    const secret = generateSecret();
    const digest = secretDigest(key, secret);
    assert.equal(digest.length, 32);
    assert.deepEqual(secretDigest(key, secret), digest);
    assert.notDeepEqual(secretDigest(other, secret), digest);
    assert.notDeepEqual(secretDigest(key, generateSecret()), digest);
    assert.ok(!digest.toString('latin1').includes(secret));
  });

  it('digests compare equal only when they are', () => {
    const key = randomBytes(32);
    const a = secretDigest(key, 'a');
    assert.ok(digestsEqual(a, secretDigest(key, 'a')));
    assert.ok(!digestsEqual(a, secretDigest(key, 'b')));
    assert.ok(!digestsEqual(a, a.subarray(0, 16)));
  });
});
