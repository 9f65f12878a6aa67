import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, type Api } from '../support/api.ts';
import { assertInvalid } from '../support/assertions.ts';
import { readAdminPat, testServer, type InProcessServer } from '../support/server.ts';
import { effectivePolicy } from '../../src/queries/policies.ts';
import { LOGIN_POLICY } from '../../src/domain/policies/login.ts';

// The login policy (docs/api/policies.md): the same instance default and org
// override as every policy kind, with the fields and defaults of the login
// policy. Its effect on self-registration is shown in the browser
// (test/signin/ui-prompts.test.ts).

const DEFAULTS = {
  forceMfa: false,
  passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED',
  allowRegister: true,
  secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F'],
  allowExternalIdp: true,
  forceMfaLocalOnly: false,
  requireEmailVerification: false,
};

describe('login policy API', () => {
  let server: InProcessServer;
  let admin: Api;
  let orgId: string;

  before(async () => {
    server = await testServer();
    admin = apiClient(server.url, readAdminPat(server.dataDir), { strictJson: true });
    const setup = await admin('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'Login Policy Org', domain: 'lp.example.test' },
        human: { userName: 'l', profile: { firstName: 'L', lastName: 'P' }, email: { email: 'l@lp.example.test' } },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    orgId = setup.body.orgId;
  });
  after(async () => {
    await server?.stop();
  });

  const strip = (policy: Record<string, unknown>) => {
    const { details: _details, ...fields } = policy;
    return fields;
  };

  it('the instance default starts as the documented defaults', async () => {
    const got = await admin('GET', '/admin/v1/policies/login');
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(strip(got.body.policy), DEFAULTS);
  });

  it('an org follows the instance default until it overrides it, and again after DELETE', async () => {
    const instance = await admin('PUT', '/admin/v1/policies/login', { body: { forceMfa: true } });
    assert.equal(instance.status, 200, instance.text);
    const inherited = await admin('GET', '/management/v1/policies/login', { orgId });
    assert.deepEqual({ ...strip(inherited.body.policy), isDefault: inherited.body.isDefault }, { ...DEFAULTS, forceMfa: true, isDefault: true });

    const own = await admin('PUT', '/management/v1/policies/login', { body: { allowRegister: false, secondFactors: ['SECOND_FACTOR_TYPE_OTP'] }, orgId });
    assert.equal(own.status, 200, own.text);
    const overridden = await admin('GET', '/management/v1/policies/login', { orgId });
    assert.equal(overridden.body.isDefault, false);
    assert.deepEqual(strip(overridden.body.policy), { ...DEFAULTS, forceMfa: true, allowRegister: false, secondFactors: ['SECOND_FACTOR_TYPE_OTP'] });
    assert.equal((await effectivePolicy(server.running.db, LOGIN_POLICY, orgId)).allowRegister, false);

    assert.equal((await admin('DELETE', '/management/v1/policies/login', { orgId })).status, 200);
    assert.equal((await effectivePolicy(server.running.db, LOGIN_POLICY, orgId)).allowRegister, true);
    assert.equal((await admin('PUT', '/admin/v1/policies/login', { body: { forceMfa: false } })).status, 200);
  });

  it('bad values are 400 naming each field, and change nothing', async () => {
    const before = await admin('GET', '/admin/v1/policies/login');
    assertInvalid(await admin('PUT', '/admin/v1/policies/login', { body: { forceMfa: 'yes' } }), ['forceMfa'], { atLeast: true });
    assertInvalid(await admin('PUT', '/admin/v1/policies/login', { body: { passwordlessType: 'PASSWORDLESS_TYPE_MAYBE' } }), ['passwordlessType'], {
      atLeast: true,
    });
    assertInvalid(await admin('PUT', '/admin/v1/policies/login', { body: { secondFactors: ['SECOND_FACTOR_TYPE_SMS'] } }), ['secondFactors[0]'], {
      atLeast: true,
    });
    assertInvalid(
      await admin('PUT', '/admin/v1/policies/login', { body: { secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_OTP'] } }),
      ['secondFactors'],
      { atLeast: true },
    );
    const unknown = await admin('PUT', '/admin/v1/policies/login', { body: { allowRegister: false, allowEverything: true } });
    assert.equal(unknown.status, 400, unknown.text);
    const after = await admin('GET', '/admin/v1/policies/login');
    assert.deepEqual(after.body, before.body);
  });
});
