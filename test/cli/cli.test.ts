import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServer, type TestServer } from '../support/server.ts';
import { NODE, ROOT } from '../support/server.ts';
import { COMMANDS } from '../../cli/commands.ts';
import { run } from '../../cli/portcullis.ts';

// The CLI (cli/portcullis.ts) run as a child process against a real server
// in this process; rotate-keys against a tiny fake server.

const CLI = join(ROOT, 'cli/portcullis.ts');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI asynchronously (the server lives in this event loop) with only PATH and HOME inherited. */
function runCli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), ...env },
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

const noStackTrace = (r: Result) => assert.doesNotMatch(r.stdout + r.stderr, /\n\s+at .+:\d+:\d+/, 'stack trace printed');

describe('portcullis CLI against a real server', () => {
  let server: TestServer;
  let patFile: string;
  let work: string;
  let orgId: string;
  let projectId: string;
  let botId: string;

  /** The CLI with --url and --pat-file of the test server; never prints the admin PAT. */
  async function cli(...args: string[]): Promise<Result> {
    const result = await runCli([...args, '--url', server.url, '--pat-file', patFile]);
    assert.ok(!result.stdout.includes(server.pat) && !result.stderr.includes(server.pat), 'the PAT was printed');
    noStackTrace(result);
    return result;
  }

  async function api(path: string, token = server.pat, org = orgId): Promise<{ status: number; body: any }> {
    const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}`, ...(org ? { 'x-service-orgid': org } : {}) } });
    return { status: response.status, body: await response.json() };
  }

  before(async () => {
    server = await testServer();
    patFile = join(server.dataDir, 'admin.pat');
    work = mkdtempSync(join(tmpdir(), 'portcullis-cli-'));
  });

  after(async () => {
    rmSync(work, { recursive: true, force: true });
    await server?.stop();
  });

  test('--help lists every command and exits 0; a command has its own help', async () => {
    const all = await cli('--help');
    assert.equal(all.code, 0, all.stderr);
    for (const command of COMMANDS) assert.match(all.stdout, new RegExp(`^  ${command.name} `, 'm'));
    const one = await cli('add-app', '--help');
    assert.equal(one.code, 0);
    assert.match(one.stdout, /^usage: portcullis add-app --project <projectId> --name <name>/);
    assert.match(one.stdout, /private-key-jwt/);
  });

  test('docs/cli.md documents every command', () => {
    const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
    for (const command of COMMANDS) assert.match(doc, new RegExp(`portcullis ${command.name}\\b`), command.name);
  });

  test('setup-org prints the created ids; the user exists', async () => {
    const passwordFile = join(work, 'password');
    writeFileSync(passwordFile, 'S3cure-Passw0rd!\n', { mode: 0o600 });
    const r = await cli(
      'setup-org',
      '--name',
      'ACME CLI',
      '--user',
      'alice',
      '--first-name',
      'Alice',
      '--last-name',
      'Doe',
      '--email',
      'alice@acme.example.com',
      '--password-file',
      passwordFile,
    );
    assert.equal(r.code, 0, r.stderr);
    const match = /^Created org ACME CLI \(orgId (\S+)\), user alice \(userId (\S+)\)\n$/.exec(r.stdout);
    assert.ok(match, r.stdout);
    orgId = match[1]!;
    const user = await api(`/management/v1/users/${match[2]}`);
    assert.equal(user.status, 200);
    assert.equal(user.body.user.userName, 'alice');
    assert.equal(r.stderr, '');
  });

  test('setup-org --json prints the raw response', async () => {
    const r = await cli(
      'setup-org',
      '--json',
      '--name',
      'Beta CLI',
      '--domain',
      'beta.example.com',
      '--user',
      'bob',
      '--first-name',
      'Bob',
      '--last-name',
      'Roe',
      '--email',
      'bob@beta.example.com',
      '--role',
      'ORG_USER_MANAGER',
    );
    assert.equal(r.code, 0, r.stderr);
    const body = JSON.parse(r.stdout);
    assert.match(body.orgId, /^\S+$/);
    assert.match(body.userId, /^\S+$/);
    assert.equal(body.details.resourceOwner, body.orgId);
  });

  test('a 400 prints the message and each field violation, exit 1', async () => {
    const r = await cli('setup-org', '--name', 'Bad', '--user', 'carol', '--first-name', 'Carol', '--last-name', 'x'.repeat(201), '--email', 'not-an-email');
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(lines[0]!, /^error: \S/);
    assert.ok(
      lines.some((l) => /^ {2}human\.email\.email: \S/.test(l)),
      r.stderr,
    );
    assert.ok(
      lines.some((l) => /^ {2}human\.profile\.lastName: \S/.test(l)),
      r.stderr,
    );
  });

  test('setup-org sends the --password-file password (a short one is refused by the policy)', async () => {
    const passwordFile = join(work, 'short.password');
    writeFileSync(passwordFile, 'short\n');
    const r = await cli(
      'setup-org',
      '--name',
      'Gamma',
      '--user',
      'dave',
      '--first-name',
      'Dave',
      '--last-name',
      'Poe',
      '--email',
      'dave@gamma.example.com',
      '--password-file',
      passwordFile,
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^ {2}human\.password: \S/m);
    const both = await cli(
      'setup-org',
      '--name',
      'Gamma',
      '--user',
      'dave',
      '--first-name',
      'Dave',
      '--last-name',
      'Poe',
      '--email',
      'dave@gamma.example.com',
      '--password-file',
      passwordFile,
      '--password',
      'S3cure-Passw0rd!',
    );
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^error: give --password or --password-file, not both\nusage: portcullis setup-org /);
  });

  test('add-project acts on --org', async () => {
    const r = await cli('add-project', '--org', orgId, '--name', 'Shop');
    assert.equal(r.code, 0, r.stderr);
    const match = /^Created project Shop \(projectId (\S+)\)\n$/.exec(r.stdout);
    assert.ok(match, r.stdout);
    projectId = match[1]!;
    const project = await api(`/management/v1/projects/${projectId}`);
    assert.equal(project.status, 200);
    assert.equal(project.body.project.details.resourceOwner, orgId);
  });

  test('add-app maps the friendly names onto the API enums', async () => {
    const r = await cli(
      'add-app',
      '--org',
      orgId,
      '--project',
      projectId,
      '--name',
      'web',
      '--json',
      '--redirect-uri',
      'https://shop.example.com/cb',
      '--redirect-uri',
      'https://shop.example.com/cb2',
      '--post-logout-uri',
      'https://shop.example.com/',
      '--type',
      'web',
      '--auth',
      'post',
      '--response-type',
      'code',
      '--grant',
      'authorization_code',
      '--grant',
      'refresh_token',
      '--access-token',
      'jwt',
      '--id-token-userinfo',
    );
    assert.equal(r.code, 0, r.stderr);
    const created = JSON.parse(r.stdout);
    assert.match(created.clientSecret, /^[A-Za-z0-9_-]+$/);
    const { status, body } = await api(`/management/v1/projects/${projectId}/apps/${created.appId}`);
    assert.equal(status, 200);
    assert.equal(body.app.clientId, created.clientId);
    assert.equal(body.app.appType, 'OIDC_APP_TYPE_WEB');
    assert.equal(body.app.authMethodType, 'OIDC_AUTH_METHOD_TYPE_POST');
    assert.deepEqual(body.app.responseTypes, ['OIDC_RESPONSE_TYPE_CODE']);
    assert.deepEqual([...body.app.grantTypes].sort(), ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN']);
    assert.equal(body.app.accessTokenType, 'OIDC_TOKEN_TYPE_JWT');
    assert.equal(body.app.idTokenUserinfoAssertion, true);
    assert.deepEqual(body.app.redirectUris, ['https://shop.example.com/cb', 'https://shop.example.com/cb2']);
    assert.deepEqual(body.app.postLogoutRedirectUris, ['https://shop.example.com/']);
  });

  test('add-app without a secret (user-agent, none, dev mode) in human form; the secret is labelled when there is one', async () => {
    const spa = await cli(
      'add-app',
      '--org',
      orgId,
      '--project',
      projectId,
      '--name',
      'spa',
      '--type',
      'user-agent',
      '--auth',
      'none',
      '--dev-mode',
      '--redirect-uri',
      'http://localhost:3000/cb',
    );
    assert.equal(spa.code, 0, spa.stderr);
    const match = /^Created app spa \(appId (\S+)\), clientId (\S+)\n$/.exec(spa.stdout);
    assert.ok(match, spa.stdout);
    const { body } = await api(`/management/v1/projects/${projectId}/apps/${match[1]}`);
    assert.equal(body.app.appType, 'OIDC_APP_TYPE_USER_AGENT');
    assert.equal(body.app.authMethodType, 'OIDC_AUTH_METHOD_TYPE_NONE');
    assert.equal(body.app.devMode, true);

    const web = await cli('add-app', '--org', orgId, '--project', projectId, '--name', 'web2', '--redirect-uri', 'https://shop.example.com/cb');
    assert.equal(web.code, 0, web.stderr);
    assert.match(web.stdout, /^Client secret \(shown once.*\):\n {2}[A-Za-z0-9_-]{20,}$/m);
  });

  test('add-app --iam-api-access: for apps of the first org; in another org the server refuses it, naming the field', async () => {
    const firstOrgProject = /projectId (\d+)/.exec((await cli('add-project', '--name', 'Console-like')).stdout)?.[1];
    assert.ok(firstOrgProject);
    const ok = await cli(
      'add-app',
      '--project',
      firstOrgProject,
      '--name',
      'console',
      '--redirect-uri',
      'https://console.example.com/cb',
      '--iam-api-access',
      '--json',
    );
    assert.equal(ok.code, 0, ok.stderr);
    const app = await api(`/management/v1/projects/${firstOrgProject}/apps/${JSON.parse(ok.stdout).appId}`, server.pat, '');
    assert.equal(app.body.app.iamApiAccess, true);
    const refused = await cli(
      'add-app',
      '--org',
      orgId,
      '--project',
      projectId,
      '--name',
      'outside',
      '--redirect-uri',
      'https://x.example.com/cb',
      '--iam-api-access',
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /iamApiAccess/);
  });

  test("add-app --require-par --dpop --backchannel-logout-uri --backchannel-logout-session: the extensions' app fields", async () => {
    const created = await cli(
      'add-app',
      '--org',
      orgId,
      '--project',
      projectId,
      '--name',
      'pushed',
      '--redirect-uri',
      'https://shop.example.com/cb',
      '--require-par',
      '--dpop',
      '--backchannel-logout-uri',
      'https://shop.example.com/logout',
      '--backchannel-logout-session',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const { body } = await api(`/management/v1/projects/${projectId}/apps/${JSON.parse(created.stdout).appId}`);
    assert.equal(body.app.requirePushedAuthorizationRequests, true);
    assert.equal(body.app.dpopBoundAccessTokens, true);
    assert.equal(body.app.backChannelLogoutUri, 'https://shop.example.com/logout');
    assert.equal(body.app.backChannelLogoutSessionRequired, true);
  });

  test('add-app with an unknown --auth value is a usage error', async () => {
    const r = await cli('add-app', '--project', projectId, '--name', 'x', '--auth', 'magic');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^error: --auth must be one of basic, post, none, private-key-jwt/);
    assert.match(r.stderr, /^usage: portcullis add-app /m);
  });

  test('add-machine-user', async () => {
    const r = await cli('add-machine-user', '--org', orgId, '--user', 'ci-bot', '--name', 'CI bot', '--description', 'builds', '--access-token', 'jwt');
    assert.equal(r.code, 0, r.stderr);
    const match = /^Created machine user ci-bot \(userId (\S+)\)\n$/.exec(r.stdout);
    assert.ok(match, r.stdout);
    botId = match[1]!;
    const { body } = await api(`/management/v1/users/${botId}`);
    assert.deepEqual(body.user.machine, { name: 'CI bot', description: 'builds', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' });
  });

  test('add-key --out writes the key file with mode 0600', async () => {
    const out = join(work, 'bot-key.json');
    const r = await cli('add-key', '--org', orgId, '--user', botId, '--expires', '2099-01-01', '--out', out);
    assert.equal(r.code, 0, r.stderr);
    const match = /^Created key (\S+) for user (\S+)\nKey file written to (.+) \(mode 0600\)\. .*shown once/.exec(r.stdout);
    assert.ok(match, r.stdout);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const key = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(key.type, 'serviceaccount');
    assert.equal(key.keyId, match[1]);
    assert.equal(key.userId, botId);
    assert.match(key.key, /^-----BEGIN (RSA )?PRIVATE KEY-----/);
    assert.ok(!r.stdout.includes('PRIVATE KEY'), 'the key was printed although --out was given');
    const keys = await api(`/management/v1/users/${botId}/keys`);
    assert.equal(keys.body.result.find((k: { id: string }) => k.id === key.keyId).expirationDate.slice(0, 10), '2099-01-01');
  });

  test('add-key without --out prints the labelled key file; --out into a missing folder creates no key', async () => {
    const r = await cli('add-key', '--org', orgId, '--user', botId);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Key file \(shown once.*\):\n {2}\{"type":"serviceaccount"/m);
    const before = (await api(`/management/v1/users/${botId}/keys`)).body.result.length;
    const missing = await cli('add-key', '--org', orgId, '--user', botId, '--out', join(work, 'nope', 'key.json'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: cannot write .*does not exist\n$/);
    assert.equal((await api(`/management/v1/users/${botId}/keys`)).body.result.length, before);
  });

  test('add-secret prints the client id and the labelled secret', async () => {
    const r = await cli('add-secret', '--org', orgId, '--user', botId);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^clientId: ci-bot\nClient secret \(shown once, store it now; it cannot be retrieved again\):\n {2}[A-Za-z0-9_-]{43}\n$/);
  });

  test('add-pat: the new token works against the API', async () => {
    const r = await cli('add-pat', '--org', orgId, '--user', botId, '--expires', '2099-01-01T00:00:00Z');
    assert.equal(r.code, 0, r.stderr);
    const match = /^Created personal access token (\S+) for user \S+\nToken \(shown once.*\):\n {2}(\S+)\n$/.exec(r.stdout);
    assert.ok(match, r.stdout);
    const self = await api(`/management/v1/users/${botId}`, match[2]!);
    assert.equal(self.status, 200);
    assert.equal(self.body.user.userName, 'ci-bot');
    // The new PAT drives the CLI too (env PORTCULLIS_PAT); the bot has no role to create a project.
    const denied = await runCli(['add-project', '--name', 'nope'], { PORTCULLIS_URL: server.url, PORTCULLIS_PAT: match[2]! });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /^error: \S/);
    assert.ok(!denied.stderr.includes(match[2]!));
  });

  test('unknown option and missing required option exit 2 with a usage line', async () => {
    const unknown = await cli('add-project', '--name', 'x', '--colour', 'red');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: unknown option '--colour'\nusage: portcullis add-project --name <name>\n$/);
    const missing = await cli('add-machine-user', '--user', 'x');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: missing required option --name\nusage: portcullis add-machine-user /);
    const none = await cli();
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^usage: portcullis <command>/m);
  });

  test('a wrong PAT gives error: … and exit 1, without printing the token', async () => {
    const wrong = join(work, 'wrong.pat');
    writeFileSync(wrong, 'not-a-valid-token-4711\n');
    const r = await runCli(['add-project', '--name', 'x', '--url', server.url, '--pat-file', wrong]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: \S.*\n$/);
    assert.ok(!r.stderr.includes('not-a-valid-token-4711'));
    noStackTrace(r);
    const missingFile = await runCli(['add-project', '--name', 'x', '--url', server.url, '--pat-file', join(work, 'absent.pat')]);
    assert.equal(missingFile.code, 1);
    assert.match(missingFile.stderr, /^error: cannot read the PAT file .*ENOENT/);
  });

  test('lockout policy: show, set (org and instance), reset; bad numbers are usage errors', async () => {
    const shown = await cli('lockout-policy');
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(
      shown.stdout,
      'Lockout policy of the org (the instance default)\nmaxPasswordAttempts: 10\nmaxOtpAttempts: 10\nlockoutDurationSeconds: 900 (locked 900 s)\n',
    );
    const set = await cli('set-lockout-policy', '--max-password-attempts', '2', '--lockout-seconds', '0');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'Set the lockout policy of the org.\n');
    const own = await cli('lockout-policy', '--json');
    assert.equal(JSON.parse(own.stdout).isDefault, false);
    assert.equal(JSON.parse(own.stdout).policy.maxPasswordAttempts, 2);
    const instance = await cli('set-lockout-policy', '--instance', '--max-otp-attempts', '0');
    assert.equal(instance.code, 0, instance.stderr);
    assert.match(
      (await cli('lockout-policy', '--instance')).stdout,
      /^Instance default lockout policy\nmaxPasswordAttempts: 10\nmaxOtpAttempts: 0 \(no lockout\)/,
    );
    const reset = await cli('reset-lockout-policy');
    assert.equal(reset.code, 0, reset.stderr);
    assert.match((await cli('lockout-policy')).stdout, /the instance default\)\nmaxPasswordAttempts: 10\nmaxOtpAttempts: 0/);
    assert.equal((await cli('reset-lockout-policy')).code, 1, 'nothing to reset: the API answers 404');
    for (const bad of ['-1', '1.5', 'ten', '99999999999']) {
      const r = await cli('set-lockout-policy', `--max-password-attempts=${bad}`);
      assert.equal(r.code, 2, bad);
      assert.match(r.stderr, /^error: --max-password-attempts must be a whole number/);
    }
    assert.equal((await cli('set-lockout-policy')).code, 2, 'no field given');
  });

  test('unlock: a locked user is unlocked; one that is not locked is an error', async () => {
    const human = await fetch(`${server.url}/management/v1/users/human`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'locked-lou', profile: { firstName: 'L', lastName: 'L' }, email: { email: 'lou@example.test' } }),
    });
    const { userId } = (await human.json()) as { userId: string };
    await server.running.db.query("UPDATE users SET state = 'locked' WHERE id = $1", [userId]);
    const r = await cli('unlock', '--user', userId);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `Unlocked user ${userId}\n`);
    const { rows } = await server.running.db.query<{ state: string }>('SELECT state FROM users WHERE id = $1', [userId]);
    assert.equal(rows[0]!.state, 'active');
    const again = await cli('unlock', '--user', userId);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not locked/);
  });

  test('lock, deactivate, reactivate: each changes the state once; the same change again is an error', async () => {
    const human = await fetch(`${server.url}/management/v1/users/human`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'dormant-dora', profile: { firstName: 'D', lastName: 'D' }, email: { email: 'dora@example.test' } }),
    });
    const { userId } = (await human.json()) as { userId: string };
    const state = async () => (await server.running.db.query<{ state: string }>('SELECT state FROM users WHERE id = $1', [userId])).rows[0]!.state;
    for (const [command, done, expected] of [
      ['lock', 'Locked', 'locked'],
      ['deactivate', 'Deactivated', 'inactive'],
      ['reactivate', 'Reactivated', 'active'],
    ]) {
      const r = await cli(command!, '--user', userId);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${done} user ${userId}\n`);
      assert.equal(await state(), expected);
    }
    const again = await cli('reactivate', '--user', userId);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not inactive/);
    assert.equal((await cli('deactivate')).code, 2, 'no --user');
  });

  test('auth-factors, remove-otp and remove-otp-codes: the authenticator app or codes of a lost device are listed, then removed; removing them again is an error', async () => {
    const human = await fetch(`${server.url}/management/v1/users/human`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'lost-lena', profile: { firstName: 'L', lastName: 'L' }, email: { email: 'lena@example.test' } }),
    });
    const { userId } = (await human.json()) as { userId: string };
    assert.equal((await cli('auth-factors', '--user', userId)).stdout, `User ${userId} has no second factor\n`);
    // Set up as the security page leaves it (the sealed secret's content does not matter here).
    await server.running.db.query('INSERT INTO user_otp (user_id, secret, ready) VALUES ($1, $2, true)', [userId, Buffer.alloc(48)]);
    const listed = await cli('auth-factors', '--user', userId);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, 'otp (authenticator app)\tAUTH_FACTOR_STATE_READY\n');
    const removed = await cli('remove-otp', '--user', userId);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, `Removed the authenticator app of user ${userId}\n`);
    const again = await cli('remove-otp', '--user', userId);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no authenticator app/);
    assert.equal((await cli('remove-otp')).code, 2, 'no user given');

    // Codes by mail as the security page leaves them (the address is not verified: listed as not ready).
    await server.running.db.query("INSERT INTO user_code_factors (user_id, channel, created_at) VALUES ($1, 'email', now())", [userId]);
    assert.equal((await cli('auth-factors', '--user', userId)).stdout, 'otp-codes email\tAUTH_FACTOR_STATE_NOT_READY\n');
    assert.equal((await cli('remove-otp-codes', '--user', userId, '--by', 'fax')).code, 2, 'no such codes');
    const codes = await cli('remove-otp-codes', '--user', userId, '--by', 'email');
    assert.equal(codes.code, 0, codes.stderr);
    assert.equal(codes.stdout, `Removed the sign-in codes by email of user ${userId}\n`);
    const codesAgain = await cli('remove-otp-codes', '--user', userId, '--by', 'email');
    assert.equal(codesAgain.code, 1);
    assert.match(codesAgain.stderr, /no one-time codes by email/);

    await server.running.db.query("INSERT INTO user_passkeys (id, user_id, credential_id, public_key, name) VALUES ('pk1', $1, 'cred-1', '\\x00', 'Laptop')", [
      userId,
    ]);
    assert.equal((await cli('auth-factors', '--user', userId)).stdout, 'passkey pk1 (Laptop)\tAUTH_FACTOR_STATE_READY\n');
    const gone = await cli('remove-passkey', '--user', userId, '--passkey', 'pk1');
    assert.equal(gone.code, 0, gone.stderr);
    assert.equal(gone.stdout, `Removed passkey pk1 of user ${userId}\n`);
    const unknown = await cli('remove-passkey', '--user', userId, '--passkey', 'pk1');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /passkey not found/);
  });

  test('an unreachable server gives one line and exit 1', async () => {
    const r = await runCli(['add-project', '--name', 'x', '--url', 'http://127.0.0.1:1', '--pat-file', patFile]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED\n$/);
    assert.ok(!r.stderr.includes(server.pat));
  });
});

test('run() in process: a URL that is not http(s) is a usage error, nothing is sent', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(['add-project', '--name', 'x', '--url', 'ftp://example.com', '--pat', 'p'], {}, { out: (t) => out.push(t), err: (t) => err.push(t) });
  assert.equal(code, 2);
  assert.deepEqual(out, []);
  assert.match(err.join('\n'), /^error: --url must be an http or https URL/);
});

describe('portcullis rotate-keys against a fake server', () => {
  let fake: Server;
  let url: string;
  const seen: Array<{ method?: string; url?: string; authorization?: string; org?: string; contentType?: string; body: string }> = [];
  let answer: { status: number; body: unknown } = { status: 200, body: {} };

  before(async () => {
    fake = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          authorization: req.headers.authorization,
          org: req.headers['x-service-orgid'] as string | undefined,
          contentType: req.headers['content-type'],
          body,
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const address = fake.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  after(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  test('sends POST /admin/v1/signing_keys/_rotate {} with the PAT and prints the JSON', async () => {
    const response = {
      details: { sequence: '42', creationDate: '2030-01-01T00:00:00.000Z', changeDate: '2030-01-01T00:00:00.000Z', resourceOwner: '1' },
      keyId: 'k2',
    };
    answer = { status: 200, body: response };
    seen.length = 0;
    const r = await runCli(['rotate-keys', '--json'], { PORTCULLIS_URL: `${url}/`, PORTCULLIS_PAT: 'fake-pat-123' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), response);
    assert.ok(!r.stdout.includes('fake-pat-123') && !r.stderr.includes('fake-pat-123'));
    assert.deepEqual(seen, [
      {
        method: 'POST',
        url: '/admin/v1/signing_keys/_rotate',
        authorization: 'Bearer fake-pat-123',
        org: undefined,
        contentType: 'application/json',
        body: '{}',
      },
    ]);

    const human = await runCli(['rotate-keys', '--url', url, '--pat', 'fake-pat-123', '--org', 'o1']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Rotated the signing keys\.\nkeyId: k2\n$/);
    assert.equal(seen[1]!.org, 'o1');
  });

  test('a token starting with a dash is the value of --pat (base64url tokens do), as --pat=…; a string option at the end without its value is a usage error', async () => {
    answer = { status: 200, body: { keyId: 'k3' } };
    seen.length = 0;
    const spaced = await runCli(['rotate-keys', '--url', url, '--pat', '-dash-first_token', '--json']);
    assert.equal(spaced.code, 0, spaced.stderr);
    const joined = await runCli(['rotate-keys', '--url', url, '--pat=-dash-first_token', '--json']);
    assert.equal(joined.code, 0, joined.stderr);
    assert.deepEqual(
      seen.map((request) => request.authorization),
      ['Bearer -dash-first_token', 'Bearer -dash-first_token'],
    );
    const missing = await runCli(['rotate-keys', '--url', url, '--pat']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--pat/);
    assert.equal(seen.length, 2, 'nothing sent');
  });

  test('an error answer prints error: <message>, exit 1', async () => {
    answer = {
      status: 403,
      body: {
        code: 7,
        message: 'permission denied: needs IAM_OWNER',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'PERMISSION_DENIED' }],
      },
    };
    const r = await runCli(['rotate-keys', '--url', url, '--pat', 'fake-pat-123']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error: permission denied: needs IAM_OWNER\n');
    const json = await runCli(['rotate-keys', '--url', url, '--pat', 'fake-pat-123', '--json']);
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout), answer.body);
    assert.equal(json.stderr, 'error: permission denied: needs IAM_OWNER\n');
  });
});
