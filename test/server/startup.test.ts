import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL, deleteRedisPrefix, dropSchema, needsPostgres, needsRedis, uniqueName } from '../support/stores.ts';
import { freePort, killAllChildren, randomMasterKey, spawnServer, tempDir, type SpawnedServer } from '../support/server.ts';

type Json = Record<string, unknown>;

async function getJson(url: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Json };
}

async function publishedKids(server: SpawnedServer): Promise<string[]> {
  const { status, body } = await getJson(`${server.url}/oauth/v2/keys`);
  assert.equal(status, 200);
  return (body.keys as Json[]).map((k) => k.kid as string);
}

/** Asserts a start-up failure: no health, non-zero exit, one line on stderr, no stack trace. */
async function assertFailsWithOneLine(server: SpawnedServer, mention: RegExp): Promise<string> {
  const code = await server.exited;
  const stderr = server.stderr();
  assert.equal(server.healthy, false, 'never became healthy');
  assert.notEqual(code, 0, `exit code is non-zero (stderr: ${stderr})`);
  assert.notEqual(code, null, 'exited by itself rather than by a signal');
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  assert.ok(lines.length >= 1 && lines.length <= 2, `one line on stderr, got:\n${stderr}`);
  assert.ok(!/^\s{4}at /m.test(stderr), `no stack trace on stderr, got:\n${stderr}`);
  assert.match(stderr, mention);
  return stderr;
}

describe('first start on the embedded database with only DATA_DIR and PORT', () => {
  let dataDir: string;
  let port: number;
  let first: SpawnedServer;
  let firstKids: string[] | undefined;

  before(async () => {
    dataDir = tempDir('portcullis-start-');
    port = await freePort();
    first = await spawnServer({ DATA_DIR: dataDir, PORT: String(port) }, { noHostDefault: true });
  });
  after(async () => {
    await killAllChildren();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves discovery for http://localhost:PORT', async () => {
    assert.ok(first.healthy, `server answered /healthz (stderr: ${first.stderr()})`);
    const { status, body } = await getJson(`${first.url}/.well-known/openid-configuration`);
    assert.equal(status, 200);
    assert.equal(body.issuer, `http://localhost:${port}`);
  });

  it('generates DATA_DIR/master.key with mode 0600', () => {
    const path = join(dataDir, 'master.key');
    assert.ok(existsSync(path));
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  it('keeps everything under DATA_DIR to its own user: folders 0700, files 0600, the embedded database included', () => {
    const loose: string[] = [];
    const walk = (path: string) => {
      const stat = statSync(path);
      const wanted = stat.isDirectory() ? 0o700 : 0o600;
      if ((stat.mode & 0o777) !== wanted) loose.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
      if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
    };
    walk(dataDir);
    assert.ok(existsSync(join(dataDir, 'pglite')), 'the embedded database lives in DATA_DIR');
    assert.deepEqual(loose, []);
  });

  it('publishes the current and the next signing key, each with its own kid', async () => {
    const kids = await publishedKids(first);
    assert.equal(kids.length, 2);
    assert.ok(kids[0] && kids[1] && kids[0] !== kids[1]);
    firstKids = kids;
  });

  it('logs JSON lines on stdout and nothing on stderr', () => {
    const lines = first.stdout().split('\n').filter(Boolean);
    assert.ok(lines.length > 0);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    assert.equal(first.stderr(), '');
  });

  it('exits with code 0 on SIGTERM', async () => {
    assert.equal(await first.stop('SIGTERM'), 0);
  });

  it('starts again on the same DATA_DIR with the same keys', async () => {
    assert.ok(firstKids, 'the first start published its keys');
    const second = await spawnServer({ DATA_DIR: dataDir, PORT: String(port) }, { noHostDefault: true });
    try {
      assert.ok(second.healthy, `second start answered /healthz (stderr: ${second.stderr()})`);
      assert.deepEqual(await publishedKids(second), firstKids);
    } finally {
      assert.equal(await second.stop('SIGTERM'), 0);
    }
  });
});

describe('start on PostgreSQL and Redis', { skip: needsPostgres || needsRedis }, () => {
  const schema = uniqueName('t');
  const otherSchema = uniqueName('t');
  const prefix = `${uniqueName('test')}:`;
  const masterKey = randomMasterKey();
  let env: Record<string, string>;
  let server: SpawnedServer;
  let pool: pg.Pool;

  before(async () => {
    env = { DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: schema, REDIS_URL: REDIS_URL!, REDIS_PREFIX: prefix, MASTER_KEY: masterKey };
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    server = await spawnServer(env);
  });
  after(async () => {
    await killAllChildren();
    await pool?.end();
    await dropSchema(DATABASE_URL, schema);
    await dropSchema(DATABASE_URL, otherSchema);
    await deleteRedisPrefix(REDIS_URL, prefix);
  });

  it('serves discovery', async () => {
    assert.ok(server.healthy, `server answered /healthz (stderr: ${server.stderr()})`);
    const { status, body } = await getJson(`${server.url}/.well-known/openid-configuration`);
    assert.equal(status, 200);
    assert.equal(body.issuer, `http://localhost:${server.port}`);
  });

  it('reports postgres and redis ok at /readyz', async () => {
    const { status, body } = await getJson(`${server.url}/readyz`);
    assert.equal(status, 200);
    assert.deepEqual(body.checks, { postgres: 'ok', redis: 'ok' });
  });

  it('keeps its signing keys in PostgreSQL, the private parts sealed', async () => {
    const kids = await publishedKids(server);
    assert.equal(kids.length, 2);
    const { rows } = await pool.query<{ kid: string; private_jwk: Buffer; public_jwk: Json }>(
      `SELECT kid, private_jwk, public_jwk FROM "${schema}".signing_keys`,
    );
    assert.deepEqual(rows.map((r) => r.kid).sort(), [...kids].sort());
    for (const row of rows) {
      assert.ok(!row.private_jwk.toString('latin1').includes('"d"'), 'private_jwk is not in clear');
      assert.ok(!('d' in row.public_jwk));
    }
  });

  it('writes no master.key file when MASTER_KEY is set', () => {
    assert.equal(existsSync(join(server.env.DATA_DIR!, 'master.key')), false);
  });

  it('reuses the same keys on a second start', async () => {
    const kids = await publishedKids(server);
    assert.equal(await server.stop('SIGTERM'), 0);
    const again = await spawnServer(env);
    try {
      assert.ok(again.healthy, `second start answered /healthz (stderr: ${again.stderr()})`);
      assert.deepEqual(await publishedKids(again), kids);
    } finally {
      assert.equal(await again.stop('SIGTERM'), 0);
    }
  });

  it('refuses to start with a different MASTER_KEY against the same schema, in one line naming MASTER_KEY', async () => {
    const wrong = await spawnServer({ ...env, MASTER_KEY: randomMasterKey() });
    await assertFailsWithOneLine(wrong, /MASTER_KEY/);
  });

  it('lets two nodes start at once on an empty schema and share one key schedule', async () => {
    const nodeEnv = { ...env, DATABASE_SCHEMA: otherSchema };
    const [a, b] = await Promise.all([spawnServer(nodeEnv), spawnServer(nodeEnv)]);
    try {
      assert.ok(a.healthy && b.healthy, `both nodes started (stderr: ${a.stderr()} ${b.stderr()})`);
      const [kidsA, kidsB] = await Promise.all([publishedKids(a), publishedKids(b)]);
      assert.equal(kidsA.length, 2);
      assert.deepEqual(kidsB, kidsA);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe('bad configuration stops the process with one line', () => {
  let occupied: Server;
  // Each process must exit by itself: one that hangs instead keeps `before`
  // waiting until the test timeout fails the file. How fast they exit is not
  // asserted here (timings belong in the bench; this machine is shared).
  const runs = new Map<string, Promise<{ server: SpawnedServer }>>();

  function run(name: string, env: Record<string, string>): Promise<unknown> {
    const done = spawnServer(env).then(async (server) => {
      await server.exited;
      return { server };
    });
    runs.set(name, done);
    return done.catch(() => {});
  }

  before(async () => {
    occupied = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    const occupiedPort = (occupied.address() as { port: number }).port;
    // Settings refused before any storage is opened: all at once.
    await Promise.all([
      run('malformed DATABASE_URL', { DATABASE_URL: 'postgres://' }),
      run('unreachable PostgreSQL', { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }),
      run('ISSUER not a URL', { ISSUER: 'not-a-url' }),
      run('ISSUER without host', { ISSUER: 'http://' }),
      run('MASTER_KEY of wrong length', { MASTER_KEY: 'ab'.repeat(31) }),
      run('unreadable CONFIG_FILE', { CONFIG_FILE: '/nonexistent/portcullis.yaml' }),
    ]);
    // Failures found after the embedded database is open (CPU-heavy): two at a time.
    await Promise.all([run('unreachable Redis', { REDIS_URL: 'redis://127.0.0.1:1' }), run('port in use', { PORT: String(occupiedPort) })]);
  });
  after(async () => {
    await killAllChildren();
    occupied?.close();
  });

  async function check(name: string, mention: RegExp): Promise<void> {
    const { server } = await runs.get(name)!;
    await assertFailsWithOneLine(server, mention);
  }

  it('refuses a malformed DATABASE_URL', () => check('malformed DATABASE_URL', /DATABASE_URL/));
  it('refuses an unreachable Redis at start', () => check('unreachable Redis', /REDIS_URL/));
  it('refuses an unreachable PostgreSQL at start', () => check('unreachable PostgreSQL', /DATABASE_URL/));
  it('refuses an ISSUER that is not a URL', () => check('ISSUER not a URL', /ISSUER/));
  it('refuses an ISSUER without a host', () => check('ISSUER without host', /ISSUER/));
  it('refuses a MASTER_KEY of the wrong length without echoing it', async () => {
    await check('MASTER_KEY of wrong length', /MASTER_KEY/);
    const { server } = await runs.get('MASTER_KEY of wrong length')!;
    assert.ok(!server.stderr().includes('ab'.repeat(31)));
  });
  it('refuses an unreadable CONFIG_FILE', () => check('unreadable CONFIG_FILE', /CONFIG_FILE/));
  it('refuses a port that is already in use', () => check('port in use', /already in use/));
});

/** Reads from a socket until `done(text)` says the response is complete, or the socket ends. */
function readResponse(socket: Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (done(text)) finish();
    };
    const finish = () => {
      socket.off('data', onData);
      socket.off('end', finish);
      socket.off('error', reject);
      resolve(text);
    };
    socket.on('data', onData);
    socket.on('end', finish);
    socket.on('error', reject);
  });
}

/** A response with Content-Length is complete once that many body bytes arrived. */
function complete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /^content-length:\s*(\d+)/im.exec(text.slice(0, end))?.[1];
  return length !== undefined && text.length - end - 4 >= Number(length);
}

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('graceful shutdown on SIGTERM', () => {
  const SHUTDOWN_TIMEOUT = 4;
  let server: SpawnedServer;
  const seen: {
    firstResponse?: string;
    runningAfterSignal?: boolean;
    idleClosedMs?: number;
    newConnection?: string;
    response?: string;
    answeredMs?: number;
    exitCode?: number | null;
    exitedMs?: number;
  } = {};

  // One scenario, observed once; the tests below each check one fact of it.
  before(async () => {
    server = await spawnServer({ SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT) });
    assert.ok(server.healthy, `server started (stderr: ${server.stderr()})`);

    // An idle keep-alive connection that has served one request.
    const idle = await openSocket(server.url);
    idle.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    seen.firstResponse = await readResponse(idle, complete);

    // A keep-alive request whose body is still on its way when SIGTERM arrives.
    const body = 'grant_type=client_credentials&scope=openid';
    const busy = await openSocket(server.url);
    busy.write(
      'POST /oauth/v2/token HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Authorization: Basic ${Buffer.from('no-such-client:secret').toString('base64')}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n` +
        body.slice(0, 10),
    );
    const answer = readResponse(busy, complete);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const signalled = Date.now();
    idle.once('close', () => (seen.idleClosedMs = Date.now() - signalled));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 700));
    seen.runningAfterSignal = !server.hasExited();
    seen.newConnection = await openSocket(server.url).then(
      (socket) => {
        socket.destroy();
        return 'accepted';
      },
      (err: NodeJS.ErrnoException) => err.code ?? 'error',
    );

    busy.write(body.slice(10));
    seen.response = await answer;
    seen.answeredMs = Date.now() - signalled;
    // The client keeps its connection open, as a load balancer would.
    seen.exitCode = await server.exited;
    seen.exitedMs = Date.now() - signalled;
    busy.destroy();
  });
  after(async () => {
    await killAllChildren();
  });

  it('keeps running while a request is in flight', () => {
    assert.match(seen.firstResponse ?? '', /^HTTP\/1\.1 200 /);
    assert.equal(seen.runningAfterSignal, true);
  });

  it('closes idle keep-alive connections at once', () => {
    assert.ok(seen.idleClosedMs !== undefined && seen.idleClosedMs < 700, `idle connection closed after ${seen.idleClosedMs} ms`);
  });

  it('refuses new connections', () => {
    assert.equal(seen.newConnection, 'ECONNREFUSED');
  });

  it('answers the in-flight request (with its storage still open)', () => {
    assert.match(seen.response ?? '', /^HTTP\/1\.1 401 /, `in-flight request answered: ${seen.response}`);
    assert.match(seen.response ?? '', /"error":"invalid_client"/);
  });

  it('exits with code 0', () => {
    assert.equal(seen.exitCode, 0);
  });

  it('exits once the in-flight request is answered, not only at SHUTDOWN_TIMEOUT', () => {
    const lingered = seen.exitedMs! - seen.answeredMs!;
    assert.ok(lingered < 2000, `exited ${lingered} ms after answering the last request (SHUTDOWN_TIMEOUT ${SHUTDOWN_TIMEOUT}s)`);
  });
});
