import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CODE_LIFETIME_SECONDS, codeDigestInput, newCodes, normaliseCode, stateOfMatch } from '../../src/domain/verification-codes.ts';

describe('verification codes', () => {
  test('a typed code is 10 characters of A–Z and 0–9, a link code 32 random bytes, each new every time', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const codes = newCodes('reset', now);
      assert.match(codes.typed, /^[A-Z0-9]{10}$/);
      assert.equal(Buffer.from(codes.link, 'base64url').length, 32);
      seen.add(codes.typed).add(codes.link);
    }
    assert.equal(seen.size, 400);
  });

  test('an invitation lives 72 hours, an email or phone verification and a reset one hour, a sign-in code 5 minutes', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    assert.deepEqual(CODE_LIFETIME_SECONDS, { init: 72 * 3600, email: 3600, reset: 3600, phone: 3600, otp_email: 300, otp_sms: 300 });
    assert.equal(newCodes('init', now).expiresAt.toISOString(), '2030-01-04T00:00:00.000Z');
    assert.equal(newCodes('email', now).expiresAt.toISOString(), '2030-01-01T01:00:00.000Z');
  });

  test('a typed code is read in any letter case and grouping; what cannot be a code is refused before any lookup', () => {
    assert.equal(normaliseCode(' ab3de-f7h9k '), 'AB3DEF7H9K');
    assert.equal(normaliseCode('AB3DE F7H9K'), 'AB3DEF7H9K');
    const link = Buffer.alloc(32, 7).toString('base64url');
    assert.equal(normaliseCode(link), link, 'a link code is taken as it is');
    for (const bad of ['', 'short', 'no such code!', 'A'.repeat(33), 'ÄBCDEFGHIJ', 'ABCDE\u0000FGHIJ']) assert.equal(normaliseCode(bad), undefined, bad);
  });

  test('a digest binds the code to its user and purpose', () => {
    const inputs = new Set([codeDigestInput('reset', 'u1', 'C'), codeDigestInput('init', 'u1', 'C'), codeDigestInput('reset', 'u2', 'C')]);
    assert.equal(inputs.size, 3);
  });

  test('a stored code that matched: used wins over expired; live until its expiry', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const later = new Date('2030-01-01T00:00:01Z');
    assert.equal(stateOfMatch({ expiresAt: later, usedAt: null }, now), 'ok');
    assert.equal(stateOfMatch({ expiresAt: now, usedAt: null }, now), 'expired');
    assert.equal(stateOfMatch({ expiresAt: now, usedAt: now }, later), 'used');
  });
});
