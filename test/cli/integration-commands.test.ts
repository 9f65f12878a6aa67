import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../cli/portcullis.ts';
import type { Io } from '../../cli/output.ts';
import { insertPat, tempDir, testServer, type TestServer } from '../support/server.ts';
import { handSp } from '../saml/support.ts';
import { ADMIN_DN, needsSlapd, startSlapd, SUFFIX } from '../support/slapd.ts';

// docs/cli.md: identity providers (from a JSON file, never echoing the
// secret), the login page's list of them, action targets (the signing key
// printed once) and executions, against a real server; bad command lines
// are usage errors (exit 2) before any call, the API's refusals exit 1.

let server: TestServer;
let patFile: string;
let orgId: string;
let files: string;
const SECRET = 'google-client-secret-never-printed';

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
  for (const secret of [server.pat, SECRET]) assert.ok(!stdout.includes(secret) && !stderr.includes(secret), 'a secret was printed');
  return { code, stdout, stderr };
}

function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const idOf = (r: Result) => /(\d{6,})/.exec(r.stdout)?.[1] ?? '';

before(async () => {
  server = await testServer();
  patFile = join(server.dataDir, 'admin.pat');
  files = tempDir('cli-integrations-');
  const org = await server.api('POST', '/management/v1/orgs', { body: { name: 'Federated' } });
  assert.equal(org.status, 200, org.text);
  orgId = org.body.id;
});

after(async () => {
  await server?.stop();
});

describe('identity providers', () => {
  test("create-idp reads the body from a file; list-idps, get-idp and the login page's list show it without its secret", async () => {
    const body = file('google.json', JSON.stringify({ name: 'Google', clientId: 'federated.apps.googleusercontent.com', clientSecret: SECRET }));
    const created = await cli('create-idp', '--org', orgId, '--kind', 'google', '--file', body);
    assert.equal(created.code, 0, created.stderr);
    const idpId = idOf(created);
    assert.match(created.stdout, new RegExp(`^Created identity provider ${idpId} in the org$`, 'm'));

    const listed = await cli('list-idps', '--org', orgId);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+KIND\s+OWNER\s+NAME$/m);
    assert.match(listed.stdout, new RegExp(`^${idpId}\\s+google\\s+org\\s+Google$`, 'm'));
    assert.equal(listed.stdout.trimEnd().split('\n').at(-1), '1 identity provider');

    const shown = await cli('get-idp', '--org', orgId, '--idp', idpId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Google \(google, org, idpId \d+\)$/m);
    assert.match(shown.stdout, /^clientId: federated\.apps\.googleusercontent\.com$/m);
    assert.match(shown.stdout, /^scopes: openid profile email$/m);
    assert.match(shown.stdout, /^isLinkingAllowed: true$/m);
    assert.equal((await cli('get-idp', '--org', orgId, '--idp', idpId, '--json')).code, 0);

    assert.equal((await cli('login-idps', '--org', orgId)).stdout.trim(), 'No identity providers on the login page.');
    const added = await cli('add-login-idp', '--org', orgId, '--idp', idpId);
    assert.equal(added.code, 0, added.stderr);
    const page = await cli('login-idps', '--org', orgId);
    assert.match(page.stdout, new RegExp(`^${idpId}\\s+google\\s+org\\s+Google$`, 'm'));
    const twice = await cli('add-login-idp', '--org', orgId, '--idp', idpId);
    assert.equal(twice.code, 1, 'listed already: 409');
    assert.equal((await cli('remove-login-idp', '--org', orgId, '--idp', idpId)).code, 0);
    assert.equal((await cli('remove-login-idp', '--org', orgId, '--idp', idpId)).code, 1, 'not listed: 404');

    const removed = await cli('remove-idp', '--org', orgId, '--idp', idpId);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await cli('get-idp', '--org', orgId, '--idp', idpId)).code, 1);
  });

  test('--instance acts on the instance: its providers and its default login page', async () => {
    const body = file(
      'github.json',
      JSON.stringify({ name: 'GitHub', clientId: 'Iv1.instance', clientSecret: SECRET, providerOptions: { isAutoCreation: true } }),
    );
    const created = await cli('create-idp', '--instance', '--kind', 'github', '--file', body);
    assert.equal(created.code, 0, created.stderr);
    const idpId = idOf(created);
    assert.match((await cli('list-idps', '--instance')).stdout, new RegExp(`^${idpId}\\s+github\\s+instance\\s+GitHub$`, 'm'));
    // An org sees the instance's providers too.
    assert.match((await cli('list-idps', '--org', orgId, '--name', 'git')).stdout, new RegExp(`^${idpId}\\s+github\\s+instance\\s+GitHub$`, 'm'));
    assert.equal((await cli('add-login-idp', '--instance', '--idp', idpId)).code, 0);
    assert.match((await cli('login-idps', '--instance')).stdout, new RegExp(`^${idpId}\\s+github\\s+instance\\s+GitHub$`, 'm'));
    assert.equal((await cli('remove-idp', '--instance', '--idp', idpId)).code, 0);
    assert.equal((await cli('login-idps', '--instance')).stdout.trim(), 'No identity providers on the login page.');
  });

  test('bad files and kinds: an unknown kind is a usage error, an unreadable or non-object file exit 1, a bad body the API names', async () => {
    const good = file('ok.json', JSON.stringify({ name: 'X', clientId: 'x', clientSecret: SECRET }));
    const unknownKind = await cli('create-idp', '--org', orgId, '--kind', 'kerberos', '--file', good);
    assert.equal(unknownKind.code, 2);
    assert.match(unknownKind.stderr, /--kind must be one of generic_oidc, oauth, google, github, gitlab, azure_ad, ldap\b/);
    const missing = await cli('create-idp', '--org', orgId, '--kind', 'google');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required option --file/);
    const gone = await cli('create-idp', '--org', orgId, '--kind', 'google', '--file', join(files, 'nowhere.json'));
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cannot read .*nowhere\.json: ENOENT/);
    for (const [name, content] of [
      ['broken.json', '{"name": "X", '],
      ['array.json', '[]'],
      ['null.json', 'null'],
    ]) {
      const r = await cli('create-idp', '--org', orgId, '--kind', 'google', '--file', file(name!, content!));
      assert.equal(r.code, 1, name);
      assert.match(r.stderr, /^error: .*(not JSON|one JSON object)/m, name);
    }
    const bad = file('bad.json', JSON.stringify({ name: '', clientSecret: SECRET, extra: 1 }));
    const refused = await cli('create-idp', '--org', orgId, '--kind', 'google', '--file', bad);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^ {2}clientId: is required$/m);
    assert.match(refused.stderr, /^ {2}extra: is not a known field$/m);
    assert.equal(JSON.parse((await cli('list-idps', '--org', orgId, '--json')).stdout).result.length, 0, 'nothing stored');
    const noIdp = await cli('get-idp', '--org', orgId);
    assert.equal(noIdp.code, 2);
  });

  test("an LDAP provider's rootCa passes through: the directory's own certificate is trusted for it alone; a private key is refused naming it", {
    skip: needsSlapd,
  }, async (t) => {
    const slapd = await startSlapd([]);
    t.after(() => slapd.close());
    await slapd.start();
    const body = {
      name: 'Directory',
      servers: [slapd.ldapsUrl],
      baseDn: SUFFIX,
      bindDn: ADMIN_DN,
      bindPassword: slapd.adminPassword,
      userBase: 'ou=people',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      attributes: { idAttribute: 'uid' },
    };
    // Nothing but rootCa makes this process trust the directory's self-signed certificate.
    const untrusted = await cli('create-idp', '--instance', '--kind', 'ldap', '--file', file('ldap-untrusted.json', JSON.stringify(body)));
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stderr, /servers: the bind failed: .*TLS failed/);
    const created = await cli(
      'create-idp',
      '--instance',
      '--kind',
      'ldap',
      '--file',
      file('ldap.json', JSON.stringify({ ...body, rootCa: slapd.certificatePem })),
    );
    assert.equal(created.code, 0, created.stderr);
    const shown = await cli('get-idp', '--instance', '--idp', idOf(created));
    assert.match(shown.stdout, /^rootCa: -----BEGIN CERTIFICATE-----$/m);
    assert.equal((await cli('remove-idp', '--instance', '--idp', idOf(created))).code, 0);

    const withKey = { ...body, rootCa: `${slapd.certificatePem}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n` };
    const refused = await cli('create-idp', '--instance', '--kind', 'ldap', '--file', file('ldap-key.json', JSON.stringify(withKey)));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^ {2}rootCa: must not hold a private key$/m);
  });
});

describe('action targets and executions', () => {
  test('add-target prints its signing key once; list-targets, target-state, set-execution and list-executions show the rest', async () => {
    const created = await cli(
      'add-target',
      '--name',
      'crm-sync',
      '--endpoint',
      'https://127.0.0.1:1/hook',
      '--timeout',
      '1s',
      '--type',
      'call',
      '--interrupt-on-error',
    );
    assert.equal(created.code, 0, created.stderr);
    const targetId = idOf(created);
    const [first, label, key] = created.stdout.trimEnd().split('\n');
    assert.equal(first, `Created target crm-sync (targetId ${targetId})`);
    assert.match(label!, /^Signing key \(shown once/);
    assert.match(key!, /^ {2}[A-Za-z0-9_-]{43}$/);
    const listed = await cli('list-targets');
    assert.match(listed.stdout, /^ID\s+TYPE\s+TIMEOUT\s+NAME\s+ENDPOINT$/m);
    assert.match(listed.stdout, new RegExp(`^${targetId}\\s+call\\s+1s\\s+crm-sync\\s+https://127\\.0\\.0\\.1:1/hook$`, 'm'));
    assert.equal(listed.stdout.trimEnd().split('\n').at(-1), '1 target');
    assert.ok(!listed.stdout.includes(key!.trim()), 'the key is not listed');
    const state = await cli('target-state', '--target', targetId);
    assert.equal(state.code, 0, state.stderr);
    assert.match(state.stdout, /^delivered up to event: \d+\nfailed attempts at the next: \d+\nlast error: /);

    const set = await cli('set-execution', '--function', 'preuserinfo', '--target', targetId);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout.trim(), `The execution calls ${targetId}, in this order`);
    assert.match((await cli('list-executions')).stdout, new RegExp(`^function preuserinfo\\s+${targetId}$`, 'm'));
    assert.equal((await cli('set-execution', '--group', 'user', '--target', targetId)).code, 0);
    const executions = await cli('list-executions');
    assert.match(executions.stdout, /^CONDITION\s+TARGETS$/m);
    assert.equal(executions.stdout.trimEnd().split('\n').at(-1), '2 executions');
    const removed = await cli('set-execution', '--function', 'preuserinfo', '--remove');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await cli('set-execution', '--function', 'preuserinfo', '--remove')).code, 1, 'none left to remove: 404');

    assert.equal((await cli('remove-target', '--target', targetId)).code, 0);
    assert.equal((await cli('list-executions')).stdout.trim(), 'No executions.', 'the execution left without targets went with it');
    assert.equal((await cli('target-state', '--target', targetId)).code, 1);
  });

  test('bad command lines are usage errors before any call; bad values are the API refusal with each field named', async () => {
    const usage: string[][] = [
      ['set-execution', '--event', 'user.human.added', '--all', '--target', '1'],
      ['set-execution', '--target', '1'],
      ['set-execution', '--all'],
      ['set-execution', '--all', '--remove', '--target', '1'],
      ['set-execution', '--function', 'prelogin', '--target', '1'],
      ['add-target', '--name', 'x', '--endpoint', 'https://x.example.test', '--type', 'grpc'],
      ['add-target', '--name', 'x', '--endpoint', 'https://x.example.test', '--type', 'async', '--interrupt-on-error'],
      ['add-target', '--name', 'x'],
      ['list-targets', '--limit', '0'],
      ['target-state'],
    ];
    for (const args of usage) {
      const r = await cli(...args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /^error: .*\nusage: portcullis /, args.join(' '));
    }
    const refused = await cli('add-target', '--name', 'slow', '--endpoint', 'http://hooks.example.test/x', '--timeout', '99s');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^ {2}endpoint: /m);
    assert.match(refused.stderr, /^ {2}timeout: /m);
    const unknown = await cli('set-execution', '--event', 'user.human.added', '--target', '424242424242');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /targets\[0\]\.target/);
    assert.equal((await cli('list-targets')).stdout.trim(), 'No targets.', 'nothing stored');
  });

  test("an org owner's token is refused: actions are the instance owner's", async () => {
    const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'org-robot', name: 'Org robot' }, orgId });
    const member = await server.api('POST', '/management/v1/orgs/me/members', { body: { userId: machine.body.userId, roles: ['ORG_OWNER'] }, orgId });
    assert.equal(member.status, 200, member.text);
    const pat = await insertPat(server, machine.body.userId);
    // The same token may manage the org's providers, not the instance's actions.
    assert.equal((await cli('list-idps', '--org', orgId, '--pat', pat)).code, 0);
    const r = await cli('list-targets', '--pat', pat);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: .*IAM_OWNER/);
  });
});

describe('SAML apps', () => {
  test('add-saml-app takes the SP metadata from a file; list-apps shows the app; one source exactly, a bad document the API names', async () => {
    const sp = handSp('cli-wiki');
    const project = await server.api('POST', '/management/v1/projects', { body: { name: 'Wiki' }, orgId });
    assert.equal(project.status, 200, project.text);
    const metadata = file('wiki-sp.xml', sp.metadataXml);
    const created = await cli('add-saml-app', '--org', orgId, '--project', project.body.id, '--name', 'wiki', '--metadata-file', metadata);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^Created SAML app wiki \(appId \d+\); the SP takes this service's IdP metadata from \{ISSUER\}\/saml\/v2\/metadata/);
    const app = await server.api('GET', `/management/v1/projects/${project.body.id}/apps/${idOf(created)}`, { orgId });
    assert.equal(app.status, 200, app.text);
    assert.match(JSON.stringify(app.body), new RegExp(sp.entityId.replace(/[./]/g, '\\$&')));
    const listed = await cli('list-apps', '--org', orgId, '--project', project.body.id);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${idOf(created)}.*wiki`));

    const both = await cli(
      'add-saml-app',
      '--org',
      orgId,
      '--project',
      project.body.id,
      '--name',
      'x',
      '--metadata-file',
      metadata,
      '--metadata-url',
      'https://sp.example.test/md',
    );
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give exactly one of --metadata-file and --metadata-url/);
    assert.equal((await cli('add-saml-app', '--org', orgId, '--project', project.body.id, '--name', 'x')).code, 2);
    const gone = await cli('add-saml-app', '--org', orgId, '--project', project.body.id, '--name', 'x', '--metadata-file', join(files, 'nowhere.xml'));
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cannot read .*nowhere\.xml: ENOENT/);
    const notXml = await cli('add-saml-app', '--org', orgId, '--project', project.body.id, '--name', 'x', '--metadata-file', file('not.xml', 'not xml at all'));
    assert.equal(notXml.code, 1);
    assert.match(notXml.stderr, /metadataXml/);
  });
});
