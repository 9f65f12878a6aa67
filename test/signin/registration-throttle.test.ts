import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startTokenWorld, type TokenWorld } from '../support/tokens.ts';
import { interactionPage, loginFormApp, postStep } from '../support/login-form.ts';

// Self-registration's "this login name is not available" says an account
// exists: it counts towards the per-address throttle like a failed login
// (docs/security.md), so after AUTH_FAILURE_LIMIT of them the address gets
// the 429 page, on the registration and the login page alike.

const LIMIT = 3;

describe('registration answers and the address throttle', () => {
  let world: TokenWorld;
  let clientId: string;

  before(async () => {
    world = await startTokenWorld({ AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW: '600' });
    ({ clientId } = await loginFormApp(world, 'signup'));
    await ok(
      world.api('POST', '/management/v1/users/human', {
        userName: 'taken@example.test',
        profile: { firstName: 'Ta', lastName: 'Ken' },
        email: { email: 'taken@example.test', isEmailVerified: true },
        password: 'Taken-Passw0rd',
      }),
      'human',
    );
  });

  after(async () => {
    await world?.stop();
  });

  /** The registration form of a fresh authorization with prompt=create. */
  const registrationForm = () => interactionPage(world.server.url, clientId, { prompt: 'create', state: 's' });

  async function register(email: string) {
    const answer = await postStep(await registrationForm(), 'register', {
      givenName: 'Eve',
      familyName: 'Probe',
      email,
      password: 'Probe-Passw0rd',
      passwordRepeat: 'Probe-Passw0rd',
    });
    return { status: answer.status, text: answer.text, retryAfter: answer.headers.get('retry-after') };
  }

  test('a registration with a free login name goes through and counts nothing', async () => {
    const answer = await register('fresh@example.test');
    assert.equal(answer.status, 303, answer.text.slice(0, 300));
  });

  test(`after ${LIMIT} "not available" answers (and the one that crosses the limit) the address gets the 429 page, on the login page too`, async () => {
    for (let i = 1; i <= LIMIT + 1; i += 1) {
      const answer = await register('taken@example.test');
      assert.equal(answer.status, 200, `answer ${i}`);
      assert.match(answer.text, /This login name is not available\./, `answer ${i}`);
    }
    const blocked = await register('taken@example.test');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.retryAfter) >= 1, `Retry-After ${blocked.retryAfter}`);
    assert.match(blocked.text, /Too many failed sign-in attempts/);
    assert.doesNotMatch(blocked.text, /not available/, 'no more oracle answers');

    const other = await register('also-free@example.test');
    assert.equal(other.status, 429, 'a blocked address registers nothing, whatever the name');

    const login = await postStep(await registrationForm(), 'password', { loginName: 'taken@example.test', password: 'Taken-Passw0rd' });
    assert.equal(login.status, 429, 'the same throttle as failed logins');
  });
});
