import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger, logFormatFor } from '../../src/logger.ts';
import { request } from '../support/api.ts';
import { freePort, MAIN, NODE, ROOT, tempDir, testServer, type TestServer } from '../support/server.ts';

// docs/operations.md "Logs": JSON lines for collectors, pino-pretty's lines
// on a terminal (LOG_FORMAT), and the reason of every 4xx in its request's
// line — the error code and message the caller got, never a secret it sent.

const SCRIPT = '/usr/bin/script';
/** ANSI colour sequences (ESC [ … m), as a terminal gets them. */
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const plainText = (text: string) => text.replace(COLOUR, '');

function memoryStream(): { stream: Writable; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe('LOG_FORMAT', () => {
  it('auto is pretty on a terminal and JSON otherwise; json and pretty hold everywhere', () => {
    assert.equal(logFormatFor('auto', true), 'pretty');
    assert.equal(logFormatFor('auto', false), 'json');
    assert.equal(logFormatFor('json', true), 'json');
    assert.equal(logFormatFor('pretty', false), 'pretty');
  });

  it('pretty: one readable line a record with time, level name and message; secrets still redacted', () => {
    const out = memoryStream();
    const log = createLogger('info', 'pretty', out.stream);
    log.info({ path: '/healthz', password: 'never-shown-1234' }, 'request');
    const line = out.text().trim();
    assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request /);
    assert.match(line, /"path":"\/healthz"/);
    assert.ok(!line.includes('never-shown-1234'), line);
    assert.equal(line.split('\n').length, 1);
    assert.ok(!line.startsWith('{'), 'not JSON');
  });

  it('json: one JSON object a line', () => {
    const out = memoryStream();
    createLogger('info', 'json', out.stream).info({ path: '/x' }, 'request');
    const record = JSON.parse(out.text());
    assert.equal(record.msg, 'request');
    assert.equal(record.level, 30);
  });
});

describe('the server on a real terminal (a pseudo-terminal from script(1))', { skip: existsSync(SCRIPT) ? false : 'script(1) is not installed' }, () => {
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let url: string;

  before(async () => {
    dataDir = tempDir('portcullis-tty-');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dataDir, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, TERM: 'xterm' };
    child = spawn(SCRIPT, ['-qfec', `${NODE} ${MAIN}`, '/dev/null'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      child.once('exit', () => reject(new Error(`the server exited: ${output}`)));
      child.stdout!.on('data', () => output.includes('listening') && resolve());
    });
    const res = await request(`${url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'tty-secret-98765', scope: 'openid' }),
    });
    assert.equal(res.status, 401, res.text);
    await new Promise<void>((resolve) => {
      const check = () => (output.includes('"status":401') ? resolve() : setTimeout(check, 50));
      check();
    });
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs pretty, coloured lines without being told to', () => {
    const plain = plainText(output);
    assert.notEqual(plain, output, 'coloured for the terminal');
    assert.match(plain, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening; discovery at /m);
    assert.ok(!/^\{"level"/m.test(plain), 'no JSON line');
  });

  it('a 4xx line names its reason but not the secret sent', () => {
    const plain = plainText(output);
    const line = plain.split('\n').find((l) => l.includes('"status":401'));
    assert.ok(line, plain);
    assert.match(line, /"refusal":\{"code":"invalid_client"/);
    assert.ok(!plain.includes('tty-secret-98765'));
  });
});

describe('the reason of a 4xx in the request line', () => {
  let server: TestServer;
  const SECRET = 'Sup3r-Secret-Value-7731';

  before(async () => {
    server = await testServer({ captureLog: true });
  });
  after(async () => {
    await server?.stop();
  });

  /** The request line of the request sent with `id` as X-Request-Id. */
  function lineOf(id: string): Record<string, any> {
    const line = server
      .logText()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((record) => record.msg === 'request' && record.requestId === id);
    assert.ok(line, `a request line for ${id}`);
    return line;
  }

  it('admin API 400: the gRPC code, the message and the fields at fault, not the values', async () => {
    const res = await server.api('POST', '/admin/v1/orgs/_setup', {
      headers: { 'x-request-id': 'log-setup-400' },
      body: { org: { name: 'Logged' }, human: { profile: { firstName: 'A', lastName: 'B' }, email: { email: 'x@example.com' }, password: SECRET } },
    });
    assert.equal(res.status, 400, res.text);
    const line = lineOf('log-setup-400');
    assert.equal(line.status, 400);
    assert.equal(line.refusal.code, 3);
    assert.match(line.refusal.message, /human\.userName/);
    assert.deepEqual(line.refusal.fields, ['human.userName']);
  });

  it('admin API 401 and 403 carry their codes 16 and 7', async () => {
    await server.api('GET', '/management/v1/users/1', { token: null, headers: { 'x-request-id': 'log-401' } });
    assert.deepEqual(lineOf('log-401').refusal.code, 16);
    const machine = await server.api('POST', '/management/v1/users/machine', { body: { userName: 'log-robot', name: 'Log robot' } });
    const pat = await server.api('POST', `/management/v1/users/${machine.body.userId}/pats`, { body: {} });
    await server.api('POST', '/management/v1/projects', { token: pat.body.token, body: { name: 'P' }, headers: { 'x-request-id': 'log-403' } });
    assert.equal(lineOf('log-403').status, 403);
    assert.equal(lineOf('log-403').refusal.code, 7);
  });

  it('token endpoint: the OAuth error and its description, never the client secret', async () => {
    const res = await request(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'log-token-401' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: SECRET, scope: 'openid' }),
    });
    assert.equal(res.status, 401, res.text);
    const line = lineOf('log-token-401');
    assert.equal(line.refusal.code, 'invalid_client');
    assert.equal(line.refusal.message, res.body.error_description);
  });

  it('an error page of the engine (unknown client at authorize) names its OAuth error', async () => {
    const res = await request(`${server.url}/oauth/v2/authorize?client_id=unknown&response_type=code&scope=openid&redirect_uri=https://x.example/cb`, {
      headers: { 'x-request-id': 'log-authorize-400', accept: 'text/html' },
    });
    assert.equal(res.status, 400);
    assert.equal(lineOf('log-authorize-400').refusal.code, 'invalid_client');
  });

  it('a 2xx line carries no refusal, and no secret of this file reached the log', async () => {
    await request(`${server.url}/healthz`, { headers: { 'x-request-id': 'log-ok' } });
    assert.equal(lineOf('log-ok').refusal, undefined);
    assert.ok(!server.logText().includes(SECRET));
  });
});
