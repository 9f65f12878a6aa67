import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PASSWORD_LENGTH, passwordPolicyViolation } from '../../src/domain/password-policy.ts';

describe('password policy', () => {
  const policy = { minLength: 8 };

  it('accepts a password of exactly the minimum length and rejects one character less', () => {
    assert.equal(passwordPolicyViolation('abcdefgh', policy), undefined);
    const violation = passwordPolicyViolation('abcdefg', policy);
    assert.equal(typeof violation, 'string');
    assert.match(violation!, /8/);
  });

  it('rejects the empty password', () => {
    assert.ok(passwordPolicyViolation('', policy));
  });

  it('counts characters, not UTF-16 units', () => {
    assert.equal(passwordPolicyViolation('🔑'.repeat(8), policy), undefined);
    assert.ok(passwordPolicyViolation('🔑'.repeat(4), policy), 'four emoji are four characters, though eight UTF-16 units');
  });

  it('follows the configured minimum', () => {
    assert.ok(passwordPolicyViolation('abcdefghij', { minLength: 12 }));
    assert.equal(passwordPolicyViolation('abcdefghijkl', { minLength: 12 }), undefined);
    assert.equal(passwordPolicyViolation('a', { minLength: 1 }), undefined);
  });

  it('caps the length at MAX_PASSWORD_LENGTH', () => {
    assert.equal(passwordPolicyViolation('a'.repeat(MAX_PASSWORD_LENGTH), policy), undefined);
    assert.match(passwordPolicyViolation('a'.repeat(MAX_PASSWORD_LENGTH + 1), policy)!, new RegExp(String(MAX_PASSWORD_LENGTH)));
  });
});
