import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base32Decode, base32Encode, matchTotp, newRecoveryCodes, normaliseRecoveryCode, otpauthUri, totpCode, totpStep } from '../../src/domain/totp.ts';

const RFC_SECRET = Buffer.from('12345678901234567890');

test('codes are those of RFC 6238 appendix B (SHA-1), to six digits', () => {
  const vectors: Array<[number, string]> = [
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
    [20000000000, '353130'],
  ];
  for (const [seconds, code] of vectors) assert.equal(totpCode(RFC_SECRET, totpStep(seconds * 1000)), code, `T=${seconds}`);
});

test('a code of the step before, now or after is accepted; two steps away is not', () => {
  const now = 1_234_567_890_000;
  const step = totpStep(now);
  for (const offset of [-1, 0, 1]) assert.equal(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + offset), now, null), step + offset);
  for (const offset of [-2, 2]) assert.equal(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + offset), now, null), undefined);
});

test('after a step was accepted, its code and earlier ones are refused', () => {
  const now = 1_234_567_890_000;
  const step = totpStep(now);
  assert.equal(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step), now, step), undefined);
  assert.equal(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step - 1), now, step), undefined);
  assert.equal(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, step + 1), now, step), step + 1);
});

test('anything but six digits is no code', () => {
  const now = 59_000;
  for (const code of ['', '28708', '2870822', '28708a', ' 287082', '２８７０８２'])
    assert.equal(matchTotp(RFC_SECRET, code, now, null), undefined, JSON.stringify(code));
});

test('base32 (RFC 4648) round-trips and matches its test vector; the otpauth URI carries the key', () => {
  assert.equal(base32Encode(Buffer.from('foobar')), 'MZXW6YTBOI');
  assert.deepEqual(base32Decode('mzxw 6ytb oi'), Buffer.from('foobar'));
  assert.throws(() => base32Decode('MZ1'));
  const uri = new URL(otpauthUri(RFC_SECRET, 'Portcullis (id.example)', 'alice@acme.example'));
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.searchParams.get('secret'), base32Encode(RFC_SECRET));
  assert.equal(uri.searchParams.get('digits'), '6');
});

test('recovery codes: ten distinct, typed in any case with or without the dash', () => {
  const codes = newRecoveryCodes();
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const code of codes) {
    assert.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
    assert.equal(normaliseRecoveryCode(code.toUpperCase().replace('-', ' ')), code);
  }
});
