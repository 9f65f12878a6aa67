import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { killAllChildren, sleep, spawnServer, type SpawnedServer } from '../support/server.ts';

// docs/operations.md, "Failure modes": SIGTERM under keep-alive load, as a load balancer sends it. The
// listener closes; requests in flight finish with their normal answer, which
// says `Connection: close`, and their connections are closed after it; a
// client that never finishes its request does not keep the process past
// SHUTDOWN_TIMEOUT; the exit code is 0.

const SHUTDOWN_TIMEOUT = 3;
const LOAD_WORKERS = 4;
const IN_FLIGHT = 6;
const BODY = 'grant_type=client_credentials&scope=openid';

interface Raw {
  socket: Socket;
  /** Everything received on the socket until the server closed it. */
  closed: Promise<string>;
}

function openRaw(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
      resolve({ socket, closed });
    });
    socket.once('error', reject);
  });
}

/** A token request with a wrong client, its body cut after 10 bytes. */
function startTokenRequest(socket: Socket): void {
  socket.write(
    'POST /oauth/v2/token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n' +
      `Authorization: Basic ${Buffer.from('no-such-client:secret').toString('base64')}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${BODY.length}\r\n\r\n` +
      BODY.slice(0, 10),
  );
}

describe('SIGTERM under keep-alive load', () => {
  let server: SpawnedServer;
  const agent = new Agent({ keepAlive: true, maxSockets: LOAD_WORKERS });
  const load = { answers: [] as Array<{ status: number; connection: string | undefined; msAfterSignal: number }>, errors: [] as string[] };
  const seen: { inFlight?: string[]; stuck?: string; readiness?: string; exitCode?: number | null; exitedMs?: number; signalledAt?: number } = {};

  before(async () => {
    // The embedded database starts slowly on a busy machine.
    server = await spawnServer({ SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT), LOG_LEVEL: 'warn' }, { readyTimeoutMs: 60_000 });
    assert.ok(server.healthy, `server started (stderr: ${server.stderr()})`);

    // Keep-alive load: each worker sends its next request as soon as the last is answered.
    let running = true;
    const get = () =>
      new Promise<void>((resolve) => {
        const req = request(`${server.url}/oauth/v2/keys`, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            load.answers.push({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              msAfterSignal: seen.signalledAt === undefined ? -1 : Date.now() - seen.signalledAt,
            });
            resolve();
          });
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          load.errors.push(err.code ?? err.message);
          setTimeout(resolve, 50);
        });
        req.end();
      });
    const workers = Array.from({ length: LOAD_WORKERS }, async () => {
      while (running) await get();
    });

    // Requests in flight at the signal: their bodies arrive after it.
    const inFlight = await Promise.all(Array.from({ length: IN_FLIGHT }, () => openRaw(server.port)));
    for (const raw of inFlight) startTokenRequest(raw.socket);
    // One client that never finishes its request.
    const stuck = await openRaw(server.port);
    startTokenRequest(stuck.socket);
    // A load balancer's health check whose headers are still on their way.
    const probe = await openRaw(server.port);
    probe.socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await sleep(500);

    seen.signalledAt = Date.now();
    server.child.kill('SIGTERM');
    await sleep(300);
    for (const raw of inFlight) raw.socket.write(BODY.slice(10));
    probe.socket.write('Connection: keep-alive\r\n\r\n');
    seen.inFlight = await Promise.all(inFlight.map((raw) => raw.closed));
    seen.readiness = await probe.closed;
    seen.stuck = await stuck.closed;
    seen.exitCode = await server.exited;
    seen.exitedMs = Date.now() - seen.signalledAt;
    running = false;
    await Promise.all(workers);
  });

  after(async () => {
    agent.destroy();
    await killAllChildren();
  });

  it('answers every request in flight at the signal with its normal answer and Connection: close, then closes its connection', () => {
    assert.equal(seen.inFlight?.length, IN_FLIGHT);
    for (const received of seen.inFlight!) {
      assert.match(received, /^HTTP\/1\.1 401 /, `in-flight request answered: ${received.slice(0, 200)}`);
      assert.match(received, /\r\nConnection: close\r\n/i);
      assert.match(received, /"error":"invalid_client"/);
      assert.equal(received.match(/HTTP\/1\.1 /g)?.length, 1, 'one answer, then the connection closed');
    }
  });

  it('says it is not ready any more, over a connection kept alive, to a health check begun before the signal', () => {
    assert.match(seen.readiness ?? '', /^HTTP\/1\.1 503 /, `health check answered: ${seen.readiness?.slice(0, 200)}`);
    assert.match(seen.readiness ?? '', /\r\nConnection: close\r\n/i);
    assert.match(seen.readiness ?? '', /"status":"stopping"/);
  });

  it('answers the keep-alive load normally until the listener closes, the answers after the signal with Connection: close', () => {
    assert.ok(load.answers.length > 20, `the load ran (${load.answers.length} answers)`);
    for (const answer of load.answers) assert.equal(answer.status, 200);
    // The signal takes a moment to reach the process: answers sent before
    // it keep their connection; a second later none does.
    assert.ok(
      load.answers.some((a) => a.msAfterSignal >= 0 && a.connection === 'close'),
      'answers after the signal say Connection: close',
    );
    for (const answer of load.answers.filter((a) => a.msAfterSignal > 1000)) assert.equal(answer.connection, 'close');
    // Once the listener is closed, new connections are refused; no request
    // sent on a kept-alive connection is reset instead of answered.
    for (const error of load.errors) assert.equal(error, 'ECONNREFUSED', 'the only failure is a refused new connection');
    assert.ok(load.errors.includes('ECONNREFUSED'), 'the listener was closed');
  });

  it('does not wait past SHUTDOWN_TIMEOUT for a request that never completes, and exits with code 0', () => {
    assert.doesNotMatch(seen.stuck ?? '', /HTTP\/1\.1 200/);
    assert.equal(seen.exitCode, 0);
    assert.ok(seen.exitedMs! < (SHUTDOWN_TIMEOUT + 2) * 1000, `exited ${seen.exitedMs} ms after SIGTERM`);
    assert.ok(seen.exitedMs! >= SHUTDOWN_TIMEOUT * 1000 - 500, `waited for the unfinished request until SHUTDOWN_TIMEOUT (${seen.exitedMs} ms)`);
  });
});
