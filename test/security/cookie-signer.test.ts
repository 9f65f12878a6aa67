import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import Keygrip from 'keygrip';
import { cookieSigner } from '../../src/security/cookie-signer.ts';

// The engine's cookies are signed by our signer instead of Keygrip
// (src/security/cookie-signer.ts): the signatures must be Keygrip's, so a
// cookie signed by a node of either kind verifies on the other.

const keys = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
const data = `_session=${randomBytes(21).toString('base64url')}`;

test('signs as Keygrip does, and each accepts the other’s signatures', () => {
  const ours = cookieSigner(keys);
  const theirs = new Keygrip(keys);
  for (const value of [data, '_interaction=abc', '', 'ünïcödé=✓', 'x'.repeat(4096)]) {
    assert.equal(ours.sign(value), theirs.sign(value));
    assert.equal(theirs.index(value, ours.sign(value)), 0);
    assert.equal(ours.index(value, theirs.sign(value)), 0);
  }
});

test('the first key signs; a signature of a later key is recognised as that key’s', () => {
  const ours = cookieSigner(keys);
  const byOldKey = new Keygrip([keys[1]!]).sign(data);
  assert.equal(ours.index(data, byOldKey), 1);
  assert.equal(ours.verify(data, byOldKey), true);
  assert.equal(cookieSigner([keys[1]!]).sign(data), byOldKey);
});

test('anything else is refused', () => {
  const ours = cookieSigner(keys);
  const good = ours.sign(data);
  const refused = [
    '',
    good.slice(1),
    `${good}A`,
    `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`,
    Buffer.from(good, 'base64url').toString('base64'),
    Buffer.from(good, 'base64url').toString('hex'),
    new Keygrip([randomBytes(32).toString('base64url')]).sign(data),
  ];
  for (const digest of refused.filter((d) => d !== good)) {
    assert.equal(ours.index(data, digest), -1, digest);
    assert.equal(ours.verify(data, digest), false);
  }
  assert.equal(ours.index(`${data}x`, good), -1, 'a signature of other data');
  assert.equal(ours.index(data, undefined as unknown as string), -1);
  assert.equal(ours.index(data, 42 as unknown as string), -1);
  assert.throws(() => cookieSigner([]), /at least one key/);
});
