import assert from 'node:assert/strict';
import { get } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { testServer, type TestServer } from '../support/server.ts';

// How the console is served (README, "Console"): one page for every path
// below /ui/console/, its script and style sheet from this origin under the
// login pages' CSP (no inline script or style), compressed and cached for
// good, and the whole first load under 150 KB on the wire.

const FIRST_LOAD_BUDGET = 150 * 1024;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent: compressed when the server compressed it. */
  body: Buffer;
}

/** A GET whose body is not decompressed (fetch would), so its size is what crossed the wire. */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('the console page and its files', () => {
  let server: TestServer;
  let page: Raw;
  let assets: string[];

  before(async () => {
    server = await testServer();
    page = await rawGet(`${server.url}/ui/console/`, { 'accept-encoding': 'br, gzip' });
    assets = [...page.body.toString().matchAll(/(?:src|href)="(\/ui\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  });
  after(() => server?.stop());

  it('answers /ui/console with a redirect to /ui/console/, and every path below it with the page', async () => {
    const bare = await rawGet(`${server.url}/ui/console`);
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.location, '/ui/console/');
    for (const path of ['/ui/console/', '/ui/console/users/123', '/ui/console/orgs/42/projects/7', '/ui/console/callback?code=x&state=y']) {
      const answer = await rawGet(`${server.url}${path}`);
      assert.equal(answer.status, 200, path);
      assert.match(String(answer.headers['content-type']), /^text\/html/);
      assert.equal(answer.body.toString(), page.body.toString());
    }
  });

  it('is a page without inline script or style, under a CSP that forbids them, naming its sign-in settings in data attributes', () => {
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['cache-control'], 'no-store');
    const html = page.body.toString();
    assert.deepEqual(
      [...html.matchAll(/<script\b[^>]*>/g)].map((m) => /\ssrc="\/ui\/console\/assets\//.test(m[0])),
      [true],
      'one script, from our own files',
    );
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
    assert.match(html, new RegExp(`data-redirect-uri="${server.issuer}/ui/console/callback"`));
    assert.match(html, /data-client-id="portcullis-console"/);
    assert.equal(assets.length, 2);
  });

  it('serves its files compressed as asked, named by content and cached for good; unknown files are 404', async () => {
    for (const path of assets) {
      const plain = await rawGet(`${server.url}${path}`);
      const br = await rawGet(`${server.url}${path}`, { 'accept-encoding': 'br, gzip' });
      const gzip = await rawGet(`${server.url}${path}`, { 'accept-encoding': 'gzip' });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.deepEqual(brotliDecompressSync(br.body), plain.body);
      assert.deepEqual(gunzipSync(gzip.body), plain.body);
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(plain.headers['x-content-type-options'], 'nosniff');
    }
    assert.equal((await rawGet(`${server.url}/ui/console/assets/console-AAAAAAAA.js`)).status, 404);
    assert.equal((await rawGet(`${server.url}/ui/console/assets/..%2F..%2Fpackage.json`)).status, 404);
  });

  it('loads in under 150 KB on the wire (page, script and style sheet, gzip)', async () => {
    let total = page.body.length;
    for (const path of assets) total += (await rawGet(`${server.url}${path}`, { 'accept-encoding': 'gzip' })).body.length;
    assert.ok(total < FIRST_LOAD_BUDGET, `first load ${total} bytes`);
  });
});
