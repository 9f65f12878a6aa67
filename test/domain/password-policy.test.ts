import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PASSWORD_LENGTH, passwordPolicyViolation, passwordRulesBroken } from '../../src/domain/password-policy.ts';
import { passwordPolicyText } from '../../src/pages/password-rules.ts';
import { CATALOGUES } from '../../src/pages/i18n.ts';

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

  it('checks each character class only when the policy asks for it, naming every broken rule', () => {
    const all = { minLength: 4, hasUppercase: true, hasLowercase: true, hasNumber: true, hasSymbol: true };
    assert.deepEqual(passwordRulesBroken('abcd', { minLength: 4 }), []);
    assert.deepEqual(passwordRulesBroken('abcd', all), ['hasUppercase', 'hasNumber', 'hasSymbol']);
    assert.deepEqual(passwordRulesBroken('ABCD', all), ['hasLowercase', 'hasNumber', 'hasSymbol']);
    assert.deepEqual(passwordRulesBroken('aB3 ', all), [], 'a space is a symbol');
    assert.deepEqual(passwordRulesBroken('Äö٣!', all), [], 'letters and digits of any script count');
    assert.deepEqual(passwordRulesBroken('aB3', all), ['minLength', 'hasSymbol']);
    assert.match(passwordPolicyViolation('aB3', all)!, /^must be at least 4 characters \(minLength\); must contain a symbol.*\(hasSymbol\)$/);
  });

  it('tells the broken rules in the page language', () => {
    const policy = { minLength: 10, hasNumber: true };
    assert.equal(passwordPolicyText(CATALOGUES.en!, 'short', policy), 'Use at least 10 characters. Use at least one digit.');
    assert.equal(passwordPolicyText(CATALOGUES.de!, 'short', policy), 'Verwenden Sie mindestens 10 Zeichen. Verwenden Sie mindestens eine Ziffer.');
    assert.equal(passwordPolicyText(CATALOGUES.en!, 'long-enough-1', policy), undefined);
  });
});
