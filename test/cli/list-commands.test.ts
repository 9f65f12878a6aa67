import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../cli/portcullis.ts';
import type { Io } from '../../cli/output.ts';
import { insertPat, testServer, type TestServer } from '../support/server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { eventually } from '../support/tokens.ts';

// docs/cli.md: list-orgs, list-users, list-projects and list-apps against a
// real server — tables, --name, --limit, --json, empty lists, and the API's
// refusals passed on with exit code 1. Then, on the same server, the
// notification commands: the SMTP server and its test mail (through a real
// SMTP server), the SMS relay, the mails an admin sends a user, a user's
// metadata and an org's message texts; wrong command lines are exit 2
// before any call, the API's refusals exit 1 naming the field.

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

describe('the notification commands', () => {
  let sink: SmtpSink;
  let userId: string;
  const outbox = async (type: string) =>
    (await server.running.db.query('SELECT 1 FROM notification_outbox WHERE user_id = $1 AND message_type = $2', [userId, type])).rowCount ?? 0;

  before(async () => {
    sink = await startSmtpSink();
    const created = await server.api('POST', '/management/v1/users/human', {
      body: { userName: 'ada', profile: { firstName: 'Ada', lastName: 'L' }, email: { email: 'ada@example.test' } },
    });
    assert.equal(created.status, 200, created.text);
    userId = created.body.userId;
  });
  after(() => sink?.stop());

  describe('smtp, set-smtp, test-smtp, remove-smtp', () => {
    test('sets the server with a password from a file, shows it without the password, sends a test mail and removes it', async () => {
      assert.match((await cli('smtp')).stdout, /^No SMTP server is set/);
      const passwordFile = join(server.dataDir, 'smtp.password');
      writeFileSync(passwordFile, 'Sink-Passw0rd\n', { mode: 0o600 });
      const set = await cli(
        'set-smtp',
        '--sender-address',
        'id@example.test',
        '--sender-name',
        'Example ID',
        '--host',
        '127.0.0.1',
        '--port',
        String(sink.port),
        '--tls',
        'none',
        '--user',
        'mailer',
        '--password-file',
        passwordFile,
      );
      assert.equal(set.code, 0, set.stderr);
      const shown = await cli('smtp');
      assert.equal(shown.stdout, `sender: Example ID <id@example.test>\nserver: 127.0.0.1:${sink.port}, TLS none (plain SMTP)\nuser: mailer\npassword: set\n`);
      assert.doesNotMatch(shown.stdout + (await cli('smtp', '--json')).stdout, /Sink-Passw0rd/);

      const sent = await cli('test-smtp', '--to', 'ops@example.test');
      assert.equal(sent.code, 0, sent.stderr);
      assert.ok(await eventually(async () => sink.received.some((m) => m.subject === 'Portcullis test mail'), 5000, 20));
      assert.ok(sink.logins.includes('mailer:Sink-Passw0rd'));
      sink.behaviour = () => ({ refuse: '550 5.1.1 mailbox unknown' });
      const refused = await cli('test-smtp', '--to', 'nobody@example.test');
      sink.behaviour = () => 'accept';
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^error: the test mail was not sent: .*mailbox unknown/);

      assert.equal((await cli('remove-smtp')).code, 0);
      assert.equal((await cli('remove-smtp')).code, 1, 'none left to remove: 404');
      assert.deepEqual((await server.api('GET', '/admin/v1/smtp')).body, {});
    });

    test('refuses a wrong command line before any call, and passes on the API’s field errors', async () => {
      const base = ['--sender-address', 'id@example.test', '--host', '127.0.0.1', '--tls', 'none'];
      for (const [args, message] of [
        [[...base, '--port', ''], /--port must be a whole number from 1 to 65535/],
        [[...base, '--port', '0'], /--port must be a whole number from 1 to 65535/],
        [[...base.slice(0, -1), 'ssl', '--port', '25'], /--tls must be one of starttls, implicit, none/],
        [[...base, '--port', '25', '--password', 'a', '--password-file', 'b'], /give --password or --password-file, not both/],
        [base, /missing required option --port/],
      ] as const) {
        const r = await cli('set-smtp', ...args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
      const bad = await cli('set-smtp', '--sender-address', 'not-an-address', '--host', 'bad host', '--port', '25', '--tls', 'none');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^ {2}senderAddress: /m);
      assert.match(bad.stderr, /^ {2}host: /m);
      const missing = await cli('set-smtp', ...base, '--port', '25', '--password-file', join(server.dataDir, 'no-such-file'));
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /cannot read password file .*ENOENT/);
      assert.deepEqual((await server.api('GET', '/admin/v1/smtp')).body, {}, 'nothing was set');
    });
  });

  describe('set-sms-relay, remove-sms-relay', () => {
    test('prints the signing key once, keeps it on a change, and names a bad endpoint', async () => {
      const bad = await cli('set-sms-relay', '--endpoint', 'ftp://sms.example.test');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /endpoint: must be an http or https URL/);
      const first = await cli('set-sms-relay', '--endpoint', 'https://sms.example.test/send');
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /Signing key \(shown once, store it now; it cannot be retrieved again\):\n {2}[A-Za-z0-9_-]{43}\n/);
      const again = await cli('set-sms-relay', '--endpoint', 'https://sms2.example.test/send');
      assert.match(again.stdout, /The signing key stays as it was\./);
      assert.equal((await cli('remove-sms-relay')).code, 0);
      assert.deepEqual((await server.api('GET', '/admin/v1/sms/http')).body, {});
    });
  });

  describe('reset-password, resend-verification, resend-invitation', () => {
    test('mails a reset, prints a code for own delivery, resends verification and invitation', async () => {
      assert.equal((await cli('reset-password', '--user', userId, '--send-mail')).code, 0);
      assert.equal(await outbox('PasswordReset'), 1);
      const code = await cli('reset-password', '--user', userId, '--return-code');
      assert.match(code.stdout, /^Password reset code of user \d+ \(single use, valid for 1 hour\): [A-Z0-9]{8,}\n$/);
      assert.equal(await outbox('PasswordReset'), 1, 'no mail for a returned code');
      for (const [command, type] of [
        ['resend-verification', 'VerifyEmail'],
        ['resend-invitation', 'InitCode'],
      ]) {
        const before = await outbox(type!);
        const r = await cli(command!, '--user', userId);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(await outbox(type!), before + 1, command);
      }
    });

    test('wants exactly one delivery, and passes on the API’s refusal', async () => {
      for (const args of [[], ['--send-mail', '--return-code']]) {
        const r = await cli('reset-password', '--user', userId, ...args);
        assert.equal(r.code, 2);
        assert.match(r.stderr, /give exactly one of --send-mail and --return-code/);
      }
      const unknown = await cli('resend-invitation', '--user', '999999');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^error: /);
    });
  });

  describe('set-metadata, metadata, list-metadata, remove-metadata', () => {
    test('sets text and bytes, shows text as text and other bytes as base64, removes a key', async () => {
      assert.equal((await cli('set-metadata', '--user', userId, '--key', 'department', '--value', 'Raketenbau ✓')).code, 0);
      assert.equal((await cli('set-metadata', '--user', userId, '--key', 'blob', '--base64', '//4A')).code, 0);
      assert.equal((await cli('metadata', '--user', userId, '--key', 'department')).stdout, 'department: Raketenbau ✓\n');
      assert.equal((await cli('list-metadata', '--user', userId)).stdout, 'KEY         VALUE\nblob        (base64) //4A\ndepartment  Raketenbau ✓\n');
      assert.equal((await cli('remove-metadata', '--user', userId, '--key', 'blob')).code, 0);
      const gone = await cli('metadata', '--user', userId, '--key', 'blob');
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /no metadata of this key/);
    });

    test('wants one value, and passes on a bad key or base64', async () => {
      for (const args of [[], ['--value', 'a', '--base64', 'YQ==']]) {
        const r = await cli('set-metadata', '--user', userId, '--key', 'k', ...args);
        assert.equal(r.code, 2);
        assert.match(r.stderr, /give exactly one of --value and --base64/);
      }
      const key = await cli('set-metadata', '--user', userId, '--key', '_hidden', '--value', 'x');
      assert.equal(key.code, 1);
      assert.match(key.stderr, /key: must be 1–200 letters/);
      const value = await cli('set-metadata', '--user', userId, '--key', 'k', '--base64', 'not base64!');
      assert.equal(value.code, 1);
      assert.match(value.stderr, /value: must be non-empty standard base64/);
    });
  });

  describe('message-text, set-message-text, remove-message-text', () => {
    test("sets the org's own texts, shows them, and goes back to the built-in ones", async () => {
      const builtIn = await cli('message-text', '--type', 'PasswordReset', '--lang', 'de');
      assert.match(builtIn.stdout, /^The built-in texts \(the org has none of its own\):\ntitle: /);
      const set = await cli(
        'set-message-text',
        '--type',
        'PasswordReset',
        '--lang',
        'de',
        '--subject',
        'Neues Passwort für {{.OrgName}}',
        '--pre-header',
        'Hallo',
      );
      assert.equal(set.code, 0, set.stderr);
      const own = await cli('message-text', '--type', 'PasswordReset', '--lang', 'de');
      assert.match(own.stdout, /^The org's own texts:\n/);
      assert.match(own.stdout, /^subject: Neues Passwort für \{\{\.OrgName\}\}$/m);
      assert.match(own.stdout, /^preHeader: Hallo$/m);
      assert.equal((await cli('remove-message-text', '--type', 'PasswordReset', '--lang', 'de')).code, 0);
      assert.equal((await cli('message-text', '--type', 'PasswordReset', '--lang', 'de')).stdout, builtIn.stdout);
    });

    test('refuses an unknown type, language or field, and passes on an unknown placeholder', async () => {
      for (const [args, message] of [
        [['--type', 'Spam', '--lang', 'de', '--subject', 'x'], /--type must be one of InitCode/],
        [['--type', 'InitCode', '--lang', 'fr', '--subject', 'x'], /--lang must be one of en, de/],
        [['--type', 'InitCode', '--lang', 'en'], /give at least one of --title/],
      ] as const) {
        const r = await cli('set-message-text', ...args);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, message);
      }
      const placeholder = await cli('set-message-text', '--type', 'InitCode', '--lang', 'en', '--text', 'Hi {{.Nope}}');
      assert.equal(placeholder.code, 1);
      assert.match(placeholder.stderr, /text: unknown placeholder \{\{\.Nope\}\}/);
      assert.equal((await server.api('GET', '/management/v1/text/message/InitCode/en')).body.isDefault, true);
    });
  });
});
