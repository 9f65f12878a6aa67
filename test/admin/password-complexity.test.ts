import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, type Api, type ApiResponse } from '../support/api.ts';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { NODE, ROOT, testServer, type TestServer } from '../support/server.ts';

// The password complexity policy (docs/api/policies.md): the generic policy
// API with its instance default and org override, and the check at every
// place of the API and the CLI that sets a password, naming the rule.

const DEFAULTS = { minLength: 8, hasUppercase: false, hasLowercase: false, hasNumber: false, hasSymbol: false };

function human(userName: string, password: string, domain = 'acme.example.test') {
  return { userName, profile: { firstName: 'Pat', lastName: 'Tester' }, email: { email: `${userName}@${domain}` }, password };
}

/** The description of the `field` violation of a 400. */
function violation(response: ApiResponse, field: string): string {
  const detail = response.body.details.find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  return detail.fieldViolations.find((v: { field: string }) => v.field === field)?.description ?? '';
}

/** The CLI as a child process, with only PATH and HOME inherited. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [join(ROOT, 'cli/portcullis.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('password complexity policy', () => {
  let server: TestServer;
  let admin: Api;
  let instanceId: string;
  let acmeId: string;
  let acmeOwner: Api;

  async function eventsOf(type: string): Promise<Array<{ aggregate_id: string; payload: Record<string, unknown> }>> {
    const { rows } = await server.running.db.query<{ aggregate_id: string; payload: Record<string, unknown> }>(
      'SELECT aggregate_id, payload FROM events WHERE event_type = $1 ORDER BY position',
      [type],
    );
    return rows;
  }

  async function userCount(): Promise<number> {
    const { rows } = await server.running.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    return rows[0]!.n;
  }

  before(async () => {
    server = await testServer();
    admin = server.api;
    instanceId = (await server.running.db.query<{ id: string }>('SELECT id FROM instance')).rows[0]!.id;
    const setup = await admin('POST', '/admin/v1/orgs/_setup', {
      body: { org: { name: 'ACME', domain: 'acme.example.test' }, human: human('owner', 'owner-password') },
    });
    assert.equal(setup.status, 200, setup.text);
    acmeId = setup.body.orgId;
    const bot = await admin('POST', '/management/v1/users/machine', { body: { userName: 'acme-owner', name: 'ACME owner' }, orgId: acmeId });
    await admin('POST', '/management/v1/orgs/me/members', { body: { userId: bot.body.userId, roles: ['ORG_OWNER'] }, orgId: acmeId });
    const pat = await admin('POST', `/management/v1/users/${bot.body.userId}/pats`, { orgId: acmeId });
    acmeOwner = apiClient(server.url, pat.body.token, { strictJson: true });
  });
  after(async () => {
    await server?.stop();
  });

  it('starts as the built-in defaults, at the instance and in every org', async () => {
    const instance = await admin('GET', '/admin/v1/policies/password_complexity');
    assert.equal(instance.status, 200, instance.text);
    const { details, ...policy } = instance.body.policy;
    assert.deepEqual(policy, DEFAULTS);
    assertDetails(details, instanceId);
    const org = await acmeOwner('GET', '/management/v1/policies/password_complexity');
    assert.equal(org.body.isDefault, true);
    assert.deepEqual({ ...org.body.policy, details: undefined }, { ...DEFAULTS, details: undefined });
  });

  it('refuses bad inputs with 400 naming the field, and changes nothing', async () => {
    const bad: Array<[unknown, string[]]> = [
      [{ minLength: -1 }, ['minLength']],
      [{ minLength: 0 }, ['minLength']],
      [{ minLength: 129 }, ['minLength']],
      [{ minLength: 1e12 }, ['minLength']],
      [{ minLength: 8.5 }, ['minLength']],
      [{ minLength: '12' }, ['minLength']],
      [{ hasUppercase: 'true' }, ['hasUppercase']],
      [{ hasNumber: 1 }, ['hasNumber']],
      [{ hasSymbol: null }, ['hasSymbol']],
      [{ minLength: 10, maxLength: 20 }, ['maxLength']],
      [{ 'hasSymbol\u0000': true }, ['(key)', 'hasSymbol\u0000']],
    ];
    for (const [body, fields] of bad) {
      for (const path of ['/admin/v1/policies/password_complexity', '/management/v1/policies/password_complexity']) {
        const caller = path.startsWith('/admin') ? admin : acmeOwner;
        assertInvalid(await caller('PUT', path, { body }), fields, { what: `${path} ${JSON.stringify(body)}` });
      }
    }
    const empty = await admin('PUT', '/admin/v1/policies/password_complexity', { body: {} });
    assert.equal(empty.status, 400, empty.text);
    const nul = await admin('PUT', '/admin/v1/policies/password_complexity', { raw: '{"minLength": "1\u0000"}' });
    assert.equal(nul.status, 400, nul.text);
    const array = await admin('PUT', '/admin/v1/policies/password_complexity', { body: [{ minLength: 10 }] });
    assert.equal(array.status, 400, array.text);
    const malformed = await admin('PUT', '/admin/v1/policies/password_complexity', { raw: '{"minLength": 10' });
    assert.equal(malformed.status, 400, malformed.text);
    assert.equal((await eventsOf('instance.policy.password_complexity.set')).length, 0);
    assert.equal((await admin('GET', '/admin/v1/policies/password_complexity')).body.policy.minLength, 8);
  });

  it('only IAM_OWNER sets the instance default; an org owner sets its own org only', async () => {
    assertError(await acmeOwner('PUT', '/admin/v1/policies/password_complexity', { body: { minLength: 9 } }), 403);
    assertError(await acmeOwner('GET', '/admin/v1/policies/password_complexity'), 403);
    const defaultOrg = (await server.running.db.query<{ default_org_id: string }>('SELECT default_org_id FROM instance')).rows[0]!.default_org_id;
    assertError(await acmeOwner('PUT', '/management/v1/policies/password_complexity', { body: { minLength: 9 }, orgId: defaultOrg }), 403);
  });

  it('the instance default applies to setup, add human and the CLI, naming the broken rule', async () => {
    const put = await admin('PUT', '/admin/v1/policies/password_complexity', { body: { hasSymbol: true, hasNumber: true } });
    assert.equal(put.status, 200, put.text);
    assertDetails(put.body.details, instanceId);
    const events = await eventsOf('instance.policy.password_complexity.set');
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.payload, { ...DEFAULTS, hasSymbol: true, hasNumber: true });

    const before = await userCount();
    const setup = await admin('POST', '/admin/v1/orgs/_setup', { body: { org: { name: 'Beta' }, human: human('b', 'longenough1', 'beta.example.test') } });
    assertInvalid(setup, ['human.password']);
    assert.match(violation(setup, 'human.password'), /symbol.*\(hasSymbol\)/);

    const add = await acmeOwner('POST', '/management/v1/users/human', { body: human('weak', 'no-digits-here') });
    assertInvalid(add, ['password']);
    assert.match(violation(add, 'password'), /number \(hasNumber\)/);
    const both = await acmeOwner('POST', '/management/v1/users/human', { body: human('weak', 'short') });
    assert.match(violation(both, 'password'), /at least 8 characters \(minLength\).*number \(hasNumber\).*symbol.*\(hasSymbol\)/, 'every broken rule named');
    assert.equal(await userCount(), before, 'nothing created');

    const cli = await runCli([
      'setup-org',
      ...['--name', 'Gamma', '--user', 'dave', '--first-name', 'Dave', '--last-name', 'Poe', '--email', 'dave@gamma.example.com'],
      ...['--password', 'NoSymbols123'],
      ...['--url', server.url, '--pat-file', join(server.dataDir, 'admin.pat')],
    ]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /^ {2}human\.password: must contain a symbol.*\(hasSymbol\)$/m);
    assert.equal(await userCount(), before, 'nothing created by the CLI');

    const good = await acmeOwner('POST', '/management/v1/users/human', { body: human('strong', 'with-digit-1') });
    assert.equal(good.status, 200, good.text);
  });

  it('an org override applies to its users only, until DELETE returns the org to the instance default', async () => {
    const put = await acmeOwner('PUT', '/management/v1/policies/password_complexity', { body: { minLength: 12, hasUppercase: true, hasLowercase: true } });
    assert.equal(put.status, 200, put.text);
    assertDetails(put.body.details, acmeId);
    const own = await acmeOwner('GET', '/management/v1/policies/password_complexity');
    assert.equal(own.body.isDefault, false);
    const { details, ...policy } = own.body.policy;
    assert.deepEqual(
      policy,
      { minLength: 12, hasUppercase: true, hasLowercase: true, hasNumber: true, hasSymbol: true },
      'fields not given come from the instance default',
    );
    assertDetails(details, acmeId);
    assert.equal((await eventsOf('org.policy.password_complexity.set'))[0]!.aggregate_id, acmeId);

    const upper = await acmeOwner('POST', '/management/v1/users/human', { body: human('lower', 'all-lower-case-1') });
    assertInvalid(upper, ['password']);
    assert.match(violation(upper, 'password'), /uppercase letter \(hasUppercase\)/);
    const short = await acmeOwner('POST', '/management/v1/users/human', { body: human('shorty', 'Short-pw-1') });
    assert.match(violation(short, 'password'), /at least 12 characters \(minLength\)/);
    // Another org follows the instance default: the same password is good there.
    const defaultOrg = await admin('POST', '/management/v1/users/human', { body: human('elsewhere', 'Short-pw-1', 'example.test') });
    assert.equal(defaultOrg.status, 200, defaultOrg.text);
    // Letters of other scripts count as upper and lower case.
    const unicode = await acmeOwner('POST', '/management/v1/users/human', { body: human('greek', 'ΑΒΓδεζ-12345') });
    assert.equal(unicode.status, 200, unicode.text);

    const removed = await acmeOwner('DELETE', '/management/v1/policies/password_complexity');
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await eventsOf('org.policy.password_complexity.removed')).length, 1);
    assert.equal((await acmeOwner('GET', '/management/v1/policies/password_complexity')).body.isDefault, true);
    const afterReset = await acmeOwner('POST', '/management/v1/users/human', { body: human('lower', 'all-lower-case-1') });
    assert.equal(afterReset.status, 200, afterReset.text);
    assertError(await acmeOwner('DELETE', '/management/v1/policies/password_complexity'), 404);
  });
});
