import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SECOND_FACTOR_REASON } from '../../src/engine/interaction-policy.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';
import { withDefaults } from '../../src/domain/policies/kind.ts';
import { afterFirstFactor, entrySteps } from '../../interactions/flow.ts';
import { allowedFactors, factorById, SECOND_FACTORS } from '../../interactions/factors/index.ts';

type Prompt = Parameters<typeof entrySteps>[0]['prompt'];

function interaction(name: string, reasons: string[] = [], accountId?: string): Parameters<typeof entrySteps>[0] {
  return { prompt: { name, reasons, details: {} } as Prompt, session: accountId ? ({ accountId } as Parameters<typeof entrySteps>[0]['session']) : undefined };
}

describe('the sign-in flow', () => {
  test('consent and create each have their own step, and nothing else is tried', () => {
    assert.deepEqual(entrySteps(interaction('consent'), false), ['consent']);
    assert.deepEqual(entrySteps(interaction('create'), false), ['register']);
  });

  test('a session lacking only the second factor tries the second-factor step before the login name', () => {
    assert.deepEqual(entrySteps(interaction('login', [SECOND_FACTOR_REASON], 'u1'), false), ['second-factor', 'login-name']);
    // Another reason as well (the session is not enough): the login starts over.
    assert.deepEqual(entrySteps(interaction('login', [SECOND_FACTOR_REASON, 'max_age'], 'u1'), false), ['login-name']);
    assert.deepEqual(entrySteps(interaction('login', [SECOND_FACTOR_REASON]), false), ['login-name']);
  });

  test('select_account offers the picker unless the user asked for another account', () => {
    assert.deepEqual(entrySteps(interaction('select_account'), false), ['select-account', 'login-name']);
    assert.deepEqual(entrySteps(interaction('select_account'), true), ['login-name']);
  });

  test('after the first factor: the held second factor, else the set-up a required one needs, else done', async () => {
    let asked = 0;
    const required = (answer: boolean) => async () => {
      asked++;
      return answer;
    };
    const verified = async () => false;
    assert.equal(await afterFirstFactor({ emailUnverified: verified, holdsFactor: true, factorRequired: required(true) }), 'second-factor');
    assert.equal(asked, 0, 'a user with a factor uses it; the rule is not read');
    assert.equal(await afterFirstFactor({ emailUnverified: verified, holdsFactor: false, factorRequired: required(true) }), 'factor-setup');
    assert.equal(await afterFirstFactor({ emailUnverified: verified, holdsFactor: false, factorRequired: required(false) }), 'done');
  });

  test('an email the login policy requires verified comes before any second factor', async () => {
    const unverified = async () => true;
    const never = async () => assert.fail('the second-factor rule is not read before the email is verified');
    assert.equal(await afterFirstFactor({ emailUnverified: unverified, holdsFactor: true, factorRequired: never }), 'mail-verification');
    assert.equal(await afterFirstFactor({ emailUnverified: unverified, holdsFactor: false, factorRequired: never }), 'mail-verification');
  });
});

describe('the second factors', () => {
  test('each factor answers at its own paths and is found by its id', () => {
    const paths = SECOND_FACTORS.flatMap((f) => [f.verifyPath, f.setupPath]);
    assert.equal(new Set(paths).size, paths.length);
    for (const factor of SECOND_FACTORS) assert.equal(factorById(factor.id), factor);
    assert.equal(factorById('sms'), undefined);
  });

  test('a login with a second factor says so in its amr (RFC 8176)', () => {
    for (const factor of SECOND_FACTORS) assert.ok(factor.amr.includes('mfa'), factor.id);
  });

  test('the login policy decides which factors may be set up', () => {
    const policy = withDefaults(LOGIN_POLICY, {});
    assert.deepEqual(
      allowedFactors({ ...policy, secondFactors: ['SECOND_FACTOR_TYPE_OTP'], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' }).map((f) => f.id),
      ['otp'],
    );
    assert.deepEqual(
      allowedFactors({ ...policy, secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' }).map((f) => f.id),
      ['passkey'],
    );
    assert.deepEqual(allowedFactors({ ...policy, secondFactors: [], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' }), []);
    assert.deepEqual(
      allowedFactors({
        ...policy,
        secondFactors: ['SECOND_FACTOR_TYPE_OTP_EMAIL', 'SECOND_FACTOR_TYPE_OTP_SMS'],
        passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED',
      }).map((f) => f.id),
      ['otpEmail', 'otpSms'],
    );
    assert.deepEqual(
      allowedFactors(policy).map((f) => f.id),
      ['otp', 'passkey'],
      'codes by mail and SMS are not in the default list',
    );
  });

  test('a factor counts as held from the one statement that reads them all', () => {
    const held = (otp: boolean, passkey: boolean, otpEmail = false, otpSms = false) =>
      SECOND_FACTORS.filter((f) => f.held({ otp, passkey, otpEmail, otpSms })).map((f) => f.id);
    assert.deepEqual(held(true, false), ['otp']);
    assert.deepEqual(held(false, true), ['passkey']);
    assert.deepEqual(held(true, true), ['otp', 'passkey']);
    assert.deepEqual(held(false, false, true, true), ['otpEmail', 'otpSms']);
  });
});
