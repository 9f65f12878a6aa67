import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertDetails, assertError, assertInvalid } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';

// docs/api/actions.md: targets and executions for IAM_OWNER, every bad
// input a documented 4xx, the signing key shown once and stored sealed.

let server: TestServer;
let instanceId: string;
let orgOwnerPat: string;
const TARGETS = '/v2beta/actions/targets';
const EXECUTIONS = '/v2beta/actions/executions';

const target = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  endpoint: 'https://hooks.example.com/portcullis',
  timeout: '10s',
  restWebhook: { interruptOnError: false },
  ...extra,
});

async function addTarget(name: string, extra: Record<string, unknown> = {}): Promise<{ id: string; signingKey: string }> {
  const res = await server.api('POST', TARGETS, { body: target(name, extra) });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

before(async () => {
  server = await testServer({ captureLog: true });
  const { rows } = await server.running.db.query<{ id: string }>('SELECT id FROM instance');
  instanceId = rows[0]!.id;
  const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'org-owner', name: 'org-owner' } });
  const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles: ['ORG_OWNER'] } });
  assert.equal(member.status, 200, member.text);
  orgOwnerPat = (await server.api('POST', `/management/v1/users/${machine.body.userId}/pats`)).body.token;
});

after(() => server?.stop());

describe('/v2beta/actions/targets', () => {
  it('creates a target with a signing key shown once, stored sealed, never in reads, events or the log', async () => {
    const res = await server.api('POST', TARGETS, { body: target('shown-once', { timeout: '0.5s' }) });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.id, /^\d{18}$/);
    assert.match(res.body.signingKey, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(res.body.creationDate, res.body.details.creationDate);
    assertDetails(res.body.details, instanceId);
    const key: string = res.body.signingKey;
    const got = await server.api('GET', `${TARGETS}/${res.body.id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(
      { ...got.body.target, details: undefined },
      {
        id: res.body.id,
        details: undefined,
        name: 'shown-once',
        endpoint: 'https://hooks.example.com/portcullis',
        timeout: '0.5s',
        restWebhook: { interruptOnError: false },
      },
    );
    const search = await server.api('POST', `${TARGETS}/_search`, { body: {} });
    const events = await server.api('POST', '/admin/v1/events/_search', { body: {} });
    const { rows } = await server.running.db.query<{ sealed: Buffer }>('SELECT signing_key_sealed AS sealed FROM action_targets WHERE id = $1', [res.body.id]);
    for (const text of [got.text, search.text, events.text, server.logText(), Buffer.from(rows[0]!.sealed).toString('latin1')]) assert.ok(!text.includes(key));
  });

  it('changes and removes a target; the key stays, a removed target is gone from its executions', async () => {
    const { id } = await addTarget('to-change');
    const changed = await server.api('PUT', `${TARGETS}/${id}`, {
      body: target('changed', { timeout: '30s', restCall: { interruptOnError: true }, restWebhook: undefined }),
    });
    assert.equal(changed.status, 200, changed.text);
    const got = await server.api('GET', `${TARGETS}/${id}`);
    assert.equal(got.body.target.name, 'changed');
    assert.deepEqual(got.body.target.restCall, { interruptOnError: true });
    assert.equal(got.body.target.timeout, '30s');
    const set = await server.api('PUT', EXECUTIONS, { body: { condition: { function: { name: 'preuserinfo' } }, targets: [{ target: id }] } });
    assert.equal(set.status, 200, set.text);
    // A function's target must stay restCall.
    assertInvalid(await server.api('PUT', `${TARGETS}/${id}`, { body: target('changed') }), ['restCall']);
    assert.equal((await server.api('DELETE', `${TARGETS}/${id}`)).status, 200);
    assertError(await server.api('GET', `${TARGETS}/${id}`), 404);
    assertError(await server.api('GET', `${TARGETS}/${id}/state`), 404);
    assertError(await server.api('DELETE', `${TARGETS}/${id}`), 404);
    const executions = await server.api('POST', `${EXECUTIONS}/_search`, { body: {} });
    assert.ok(!executions.text.includes(id), executions.text);
  });

  it('refuses a second target of the same name: 409', async () => {
    await addTarget('twice');
    assertError(await server.api('POST', TARGETS, { body: target('twice') }), 409);
  });

  it('answers bad bodies 400 naming the field, and writes nothing', async () => {
    const before = (await server.running.db.query('SELECT 1 FROM action_targets')).rows.length;
    const cases: Array<[unknown, string[]]> = [
      [target('http', { endpoint: 'http://hooks.example.com/x' }), ['endpoint']],
      [target('relative', { endpoint: '/hook' }), ['endpoint']],
      [target('userinfo', { endpoint: 'https://user:pw@hooks.example.com/' }), ['endpoint']],
      [target('fragment', { endpoint: 'https://hooks.example.com/#x' }), ['endpoint']],
      [target('metadata', { endpoint: 'https://169.254.169.254/latest' }), ['endpoint']],
      [target('metadata6', { endpoint: 'https://[fd00:ec2::254]/latest' }), ['endpoint']],
      [target('ftp', { endpoint: 'ftp://hooks.example.com/' }), ['endpoint']],
      [target('long', { endpoint: `https://hooks.example.com/${'a'.repeat(2000)}` }), ['endpoint']],
      [target('minutes', { timeout: '10m' }), ['timeout']],
      [target('number', { timeout: 10 }), ['timeout']],
      [target('too-long', { timeout: '31s' }), ['timeout']],
      [target('too-short', { timeout: '0.05s' }), ['timeout']],
      [target('', {}), ['name']],
      [target('nul\u0000name'), ['name']],
      [target('x', { endpoint: 'https://hooks.example.com/\u0000' }), ['endpoint']],
      [target('two-types', { restCall: { interruptOnError: true } }), ['(body)']],
      [target('bad-flag', { restWebhook: { interruptOnError: 'yes' } }), ['restWebhook.interruptOnError']],
      [target('extra', { extra: 1 }), ['extra']],
      [{ name: 'no-type', endpoint: 'https://hooks.example.com/', timeout: '1s' }, ['(body)']],
      [{ endpoint: 'https://hooks.example.com/', timeout: '1s', restAsync: {} }, ['name']],
      [[], ['(body)']],
    ];
    for (const [body, fields] of cases) {
      assertInvalid(await server.api('POST', TARGETS, { body }), fields, { atLeast: true, what: JSON.stringify(body).slice(0, 80) });
    }
    assertInvalid(await server.api('POST', TARGETS, { raw: '{"name":' }), [], { atLeast: true });
    assert.equal((await server.running.db.query('SELECT 1 FROM action_targets')).rows.length, before);
  });

  it('answers unknown and malformed ids 404', async () => {
    assertError(await server.api('GET', `${TARGETS}/123456789012345678`), 404);
    assertError(await server.api('PUT', `${TARGETS}/123456789012345678`, { body: target('ghost') }), 404);
    assertError(await server.api('GET', `${TARGETS}/bad%00id`), 404);
    assertError(await server.api('GET', `${TARGETS}/${'9'.repeat(65)}/state`), 404);
  });

  it('pages the search and refuses bad pages', async () => {
    const page = await server.api('POST', `${TARGETS}/_search`, { body: { query: { limit: 1, asc: false } } });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.result.length, 1);
    assert.ok(Number(page.body.details.totalResult) >= 2);
    assertInvalid(await server.api('POST', `${TARGETS}/_search`, { body: { query: { limit: '5000' } } }), ['query.limit']);
    assertInvalid(await server.api('POST', `${TARGETS}/_search`, { body: { queries: [] } }), ['queries']);
  });
});

describe('/v2beta/actions/executions', () => {
  it('sets, lists and removes an execution; targets keep their order', async () => {
    const a = await addTarget('exec-a');
    const b = await addTarget('exec-b');
    const set = await server.api('PUT', EXECUTIONS, { body: { condition: { event: { group: 'user.human' } }, targets: [{ target: b.id }, { target: a.id }] } });
    assert.equal(set.status, 200, set.text);
    assertDetails(set.body.details, instanceId);
    const listed = await server.api('POST', `${EXECUTIONS}/_search`, { body: {} });
    const execution = listed.body.result.find((x: any) => x.condition.event?.group === 'user.human');
    assert.deepEqual(execution.targets, [{ target: b.id }, { target: a.id }]);
    assert.equal((await server.api('PUT', EXECUTIONS, { body: { condition: { event: { group: 'user.human' } }, targets: [] } })).status, 200);
    const after = await server.api('POST', `${EXECUTIONS}/_search`, { body: {} });
    assert.ok(!after.body.result.some((x: any) => x.condition.event?.group === 'user.human'));
    assertError(await server.api('PUT', EXECUTIONS, { body: { condition: { event: { group: 'user.human' } }, targets: [] } }), 404);
  });

  it('answers bad conditions and targets 400 naming the field, and writes nothing', async () => {
    const webhook = await addTarget('exec-webhook');
    const before = (await server.running.db.query('SELECT 1 FROM action_execution_targets')).rows.length;
    const cases: Array<[unknown, string[]]> = [
      [{ condition: { event: { event: 'user.human.added' } }, targets: [{ target: '123456789012345678' }] }, ['targets[0].target']],
      [{ condition: { event: { event: 'user.human.added' } }, targets: [{ target: webhook.id }, { target: webhook.id }] }, ['targets[1].target']],
      [{ condition: { function: { name: 'preaccesstoken' } }, targets: [{ target: webhook.id }] }, ['targets[0].target']],
      [{ condition: { function: { name: 'postauthentication' } }, targets: [] }, ['condition.function.name']],
      [{ condition: { event: { all: false } }, targets: [] }, ['condition.event.all']],
      [{ condition: { event: { event: 'User Added' } }, targets: [] }, ['condition.event.event']],
      [{ condition: { event: { event: 'user\u0000added' } }, targets: [] }, ['condition.event.event']],
      [{ condition: { event: { event: 'a', group: 'b' } }, targets: [] }, ['condition.event']],
      [{ condition: { event: {}, function: { name: 'preuserinfo' } }, targets: [] }, ['condition']],
      [{ condition: {}, targets: [] }, ['condition']],
      [{ condition: { event: { all: true } }, targets: 'x' }, ['targets']],
      [{ condition: { event: { all: true } }, targets: [{ target: 5 }] }, ['targets[0].target']],
      [{ condition: { event: { all: true } } }, ['targets']],
    ];
    for (const [body, fields] of cases) {
      assertInvalid(await server.api('PUT', EXECUTIONS, { body }), fields, { atLeast: true, what: JSON.stringify(body).slice(0, 80) });
    }
    assert.equal((await server.running.db.query('SELECT 1 FROM action_execution_targets')).rows.length, before);
  });
});

describe('who may configure actions', () => {
  it('needs IAM_OWNER: 403 for an ORG_OWNER, 401 without a token', async () => {
    const { id } = await addTarget('guarded');
    const calls: Array<[string, string, unknown?]> = [
      ['POST', TARGETS, target('org-owner')],
      ['POST', `${TARGETS}/_search`, {}],
      ['GET', `${TARGETS}/${id}`],
      ['PUT', `${TARGETS}/${id}`, target('org-owner')],
      ['DELETE', `${TARGETS}/${id}`],
      ['GET', `${TARGETS}/${id}/state`],
      ['PUT', EXECUTIONS, { condition: { event: { all: true } }, targets: [{ target: id }] }],
      ['POST', `${EXECUTIONS}/_search`, {}],
    ];
    for (const [method, path, body] of calls) {
      assertError(await server.api(method, path, { body, token: orgOwnerPat }), 403);
      assertError(await server.api(method, path, { body, token: null }), 401);
    }
    assert.equal((await server.api('GET', `${TARGETS}/${id}`)).status, 200);
  });
});
