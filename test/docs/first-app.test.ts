import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, needsChromium, signIn } from '../support/browser.ts';
import { ROOT, testServer, type TestServer } from '../support/server.ts';

// README "Connect your first app", followed to the letter: its shell block's
// curl commands are read from the README and sent as written (the one
// change: ISSUER is this test server's), the answer's id goes where the
// README says, and its openid-client code runs as a module and signs the
// first-start admin in with Chromium.

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The text of the README section `title`, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`## ${title}\n`);
  assert.ok(start >= 0, `README has "## ${title}"`);
  const end = README.indexOf('\n## ', start + 3);
  return README.slice(start, end === -1 ? undefined : end);
}

/** The fenced blocks of `lang` in `text`. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

/** Shell words with quotes removed and `$NAME` / `$(cat file)` expanded (none inside single quotes). */
function shellWords(line: string, vars: Record<string, string>, cat: (path: string) => string): string[] {
  const expand = (text: string) =>
    text.replace(/\$\(cat ([^)]+)\)|\$(\w+)/g, (_m, file: string | undefined, name: string | undefined) => {
      if (file) return cat(file.trim());
      assert.ok(name && name in vars, `$${name} is set before it is used`);
      return vars[name!]!;
    });
  const words: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|((?:\$\([^)]*\)|[^\s'"])+)/g)) {
    const [, single, double, bare] = match;
    words.push(single ?? expand(double ?? bare!));
  }
  return words;
}

interface CurlCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The options the README's curl commands use: -s, -X, -H, -d; anything else fails the test. */
function curlCall(words: string[]): CurlCall {
  assert.equal(words[0], 'curl');
  const call: CurlCall = { method: 'GET', url: '', headers: {} };
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-s') continue;
    if (word === '-X') call.method = words[++i]!;
    else if (word === '-H') {
      const [name, ...value] = words[++i]!.split(':');
      call.headers[name!.trim().toLowerCase()] = value.join(':').trim();
    } else if (word === '-d') call.body = words[++i]!;
    else if (/^https?:\/\//.test(word)) call.url = word;
    else assert.fail(`the README's curl uses an option this test does not know: ${word}`);
  }
  return call;
}

let server: TestServer;
let browser: Browser | undefined;
let work: string;

before(async () => {
  // INSTANCE_DOMAIN localhost: the admin is admin@default.localhost, as the README says.
  server = await testServer({ env: { INSTANCE_DOMAIN: 'localhost' } });
  work = mkdtempSync(join(tmpdir(), 'portcullis-first-app-'));
});
after(async () => {
  await browser?.close();
  rmSync(work, { recursive: true, force: true });
  await server?.stop();
});

describe('README: Connect your first app', () => {
  const text = section('Connect your first app');
  const vars: Record<string, string> = {};
  const answers: Array<Record<string, any>> = [];

  it('has one shell block and one openid-client block', () => {
    assert.equal(blocks(text, 'sh').length, 1);
    assert.equal(blocks(text, 'js').length, 1);
  });

  it('its curl commands create a project and an app, as written', async () => {
    const lines = blocks(text, 'sh')[0]!
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter(Boolean);
    const cat = (path: string) => {
      assert.equal(path, 'data/admin.pat', 'the README reads the first-start PAT');
      return readFileSync(join(server.dataDir, 'admin.pat'), 'utf8').trim();
    };
    for (const line of lines) {
      const readerSets = /^# \{"(\w+)":.*→ export (\w+)=/.exec(line);
      if (readerSets) {
        vars[readerSets[2]!] = String(answers.at(-1)![readerSets[1]!]);
        continue;
      }
      if (line.startsWith('#')) continue;
      const words = shellWords(line, vars, cat);
      if (words[0] === 'export') {
        for (const assignment of words.slice(1)) {
          const [name, ...value] = assignment.split('=');
          vars[name!] = value.join('=');
        }
        assert.equal(vars.ISSUER, 'http://localhost:8080', 'the README names the default issuer');
        vars.ISSUER = server.issuer;
        continue;
      }
      const call = curlCall(words);
      const res = await fetch(call.url, { method: call.method, headers: call.headers, ...(call.body ? { body: call.body } : {}) });
      const body = (await res.json()) as Record<string, any>;
      assert.equal(res.status, 200, `${call.method} ${call.url}: ${JSON.stringify(body)}`);
      answers.push(body);
    }
    assert.equal(answers.length, 2, 'a project, then an app');
    assert.match(vars.PROJECT_ID ?? '', /^\d+$/, 'PROJECT_ID set from the first answer');
    assert.ok(answers[1]!.clientId && answers[1]!.clientSecret, 'the app answer has the client id and its secret');
  });

  it('its openid-client code signs the first-start admin in and returns the user', { skip: needsChromium }, async () => {
    const app = answers[1];
    assert.ok(app, 'the app of the previous step');
    const code = blocks(text, 'js')[0]!;
    writeFileSync(join(work, 'first-app.mjs'), code);
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'));
    Object.assign(process.env, { ISSUER: server.issuer, CLIENT_ID: app.clientId, CLIENT_SECRET: app.clientSecret });
    const module = (await import(pathToFileURL(join(work, 'first-app.mjs')).href)) as {
      login(): Promise<{ url: URL; code_verifier: string }>;
      callback(url: URL, verifier: string): Promise<{ user: Record<string, unknown>; tokens: { access_token: string } }>;
    };

    const { url, code_verifier } = await module.login();
    browser = await launchBrowser();
    const page = await browser.newPage();
    let landed: string | undefined;
    await page.route('http://localhost:3000/**', async (route) => {
      landed = route.request().url();
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
    });
    await page.goto(url.href);
    const password = readFileSync(join(server.dataDir, 'admin.password'), 'utf8').trim();
    await signIn(page, { loginName: 'admin@default.localhost', password });
    await page.waitForURL((current) => current.href.startsWith('http://localhost:3000/callback'));
    assert.ok(landed, 'the browser came back to the redirect URI');

    const { user, tokens } = await module.callback(new URL(landed), code_verifier);
    const { rows } = await server.running.db.query<{ id: string }>("SELECT id FROM users WHERE user_name = 'admin' AND type = 'human'");
    assert.equal(user.sub, rows[0]!.id);
    assert.equal(user.email, 'admin@default.localhost');
    const introspected = await fetch(`${server.issuer}/oauth/v2/introspect`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: tokens.access_token }),
    });
    assert.equal(((await introspected.json()) as { active: boolean }).active, true);
  });
});
