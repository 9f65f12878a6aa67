import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run } from '../../cli/portcullis.ts';
import type { Io } from '../../cli/output.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';

// docs/cli.md: list-orgs, list-users, list-projects and list-apps against a
// real server — tables, --name, --limit, --json, empty lists, and the API's
// refusals passed on with exit code 1.

let server: TestServer;
let patFile: string;
let orgId: string;
let projectId: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...args: string[]): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const io: Io = { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`) };
  const hasPat = args.includes('--pat');
  const code = await run([...args, '--url', server.url, ...(hasPat ? [] : ['--pat-file', patFile])], {}, io);
  assert.ok(!stdout.includes(server.pat) && !stderr.includes(server.pat), 'the PAT was printed');
  return { code, stdout, stderr };
}

const lines = (r: Result) => r.stdout.trimEnd().split('\n');

before(async () => {
  server = await testServer();
  patFile = join(server.dataDir, 'admin.pat');
  const org = await server.api('POST', '/management/v1/orgs', { body: { name: 'Listed Org' } });
  assert.equal(org.status, 200, org.text);
  orgId = org.body.id;
  for (const userName of ['zoe', 'yann', 'xavier']) {
    const body = { userName, profile: { firstName: 'F', lastName: 'L' }, email: { email: `${userName}@example.com` } };
    assert.equal((await server.api('POST', '/management/v1/users/human', { body, orgId })).status, 200);
  }
  assert.equal((await server.api('POST', '/management/v1/users/machine', { body: { userName: 'robot', name: 'Robot' }, orgId })).status, 200);
  const project = await server.api('POST', '/management/v1/projects', { body: { name: 'Shop' }, orgId });
  projectId = project.body.id;
  await server.api('POST', '/management/v1/projects', { body: { name: 'Warehouse' }, orgId });
  const app = {
    name: 'Storefront',
    redirectUris: ['https://shop.example.com/cb'],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  };
  assert.equal((await server.api('POST', `/management/v1/projects/${projectId}/apps/oidc`, { body: app, orgId })).status, 200);
});

after(async () => {
  await server?.stop();
});

describe('list-users', () => {
  test('a table of the org users with type, state and login name, and the count', async () => {
    const r = await cli('list-users', '--org', orgId);
    assert.equal(r.code, 0, r.stderr);
    const [header, ...rest] = lines(r);
    assert.match(header!, /^ID\s+TYPE\s+STATE\s+LOGIN NAME$/);
    assert.equal(rest.at(-1), '4 users');
    const rows = rest.slice(0, -1);
    assert.deepEqual(
      rows.map((row) => row.split(/\s+/).slice(1)),
      [
        ['machine', 'active', 'robot@listed-org.example.test'],
        ['human', 'active', 'xavier@listed-org.example.test'],
        ['human', 'active', 'yann@listed-org.example.test'],
        ['human', 'active', 'zoe@listed-org.example.test'],
      ],
    );
    // Columns line up: every row starts its second column where the header does.
    const at = header!.indexOf('TYPE');
    for (const row of rows) assert.match(row.slice(at), /^(machine|human)/);
  });

  test('--name narrows by login name (any case); --limit shows how many more there are', async () => {
    const named = await cli('list-users', '--org', orgId, '--name', 'YA');
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(lines(named).slice(1), [lines(named)[1]!, '1 user']);
    assert.match(lines(named)[1]!, /yann@/);
    const limited = await cli('list-users', '--org', orgId, '--limit', '2');
    assert.equal(lines(limited).length, 4);
    assert.equal(lines(limited).at(-1), '2 of 4 users (raise --limit or narrow with --name)');
  });

  test('--json prints the search answer as it came', async () => {
    const r = await cli('list-users', '--org', orgId, '--name', 'zoe', '--json');
    assert.equal(r.code, 0);
    const body = JSON.parse(r.stdout);
    assert.equal(body.details.totalResult, '1');
    assert.equal(body.result[0].userName, 'zoe');
  });

  test('nothing found says so', async () => {
    const r = await cli('list-users', '--org', orgId, '--name', 'nobody-here');
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), 'No users.');
  });
});

describe('list-orgs, list-projects, list-apps', () => {
  test('list-orgs shows every org with its state and domain', async () => {
    const r = await cli('list-orgs');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ID\s+STATE\s+DOMAIN\s+NAME$/m);
    assert.match(r.stdout, new RegExp(`^${orgId}\\s+active\\s+listed-org\\.example\\.test\\s+Listed Org$`, 'm'));
    assert.match(r.stdout, /^\d+\s+active\s+default\.example\.test\s+Default$/m);
    assert.equal(lines(r).at(-1), '2 organizations');
  });

  test('list-projects and --name', async () => {
    const all = await cli('list-projects', '--org', orgId);
    assert.deepEqual(
      lines(all)
        .slice(0, -1)
        .map((l) => l.replace(/^\S+\s+/, '')),
      ['NAME', 'Shop', 'Warehouse'],
    );
    assert.equal(lines(all).at(-1), '2 projects');
    const named = await cli('list-projects', '--org', orgId, '--name', 'ware');
    assert.deepEqual(lines(named).slice(-2), [lines(named).at(-2)!, '1 project']);
    assert.match(lines(named).at(-2)!, /Warehouse$/);
  });

  test('list-apps names the app, its client id and type; --project is required', async () => {
    const r = await cli('list-apps', '--org', orgId, '--project', projectId);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ID\s+CLIENT ID\s+TYPE\s+NAME$/m);
    assert.match(r.stdout, /^\d+\s+\S+\s+web\s+Storefront$/m);
    const missing = await cli('list-apps', '--org', orgId);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--project/);
  });
});

describe('bad input and refusals', () => {
  test('--limit outside 1..1000 or not a number is a usage error (2), before any call', async () => {
    for (const limit of ['0', '1001', 'ten', '-1']) {
      const r = await cli('list-projects', '--org', orgId, '--limit', limit);
      assert.equal(r.code, 2, `--limit ${limit}`);
      assert.match(r.stderr, /--limit/);
    }
  });

  test("an unknown project is the API's 404 (exit 1); another org's token is refused (exit 1)", async () => {
    const unknown = await cli('list-apps', '--org', orgId, '--project', '999999999999999999');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: /);
    const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'outsider', name: 'Outsider' } });
    const pat = await insertPat(server, machine.body.userId);
    const refused = await cli('list-users', '--org', orgId, '--pat', pat);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /error: /);
    const orgs = await cli('list-orgs', '--pat', pat);
    assert.equal(orgs.code, 1, 'listing orgs needs IAM_OWNER');
  });
});
