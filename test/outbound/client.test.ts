import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, afterEach, before, beforeEach, describe, mock, test } from 'node:test';
import tls from 'node:tls';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { Agent } from 'undici';
import { type OutboundCaller, type OutboundClient, outboundClient, MAX_BODY_BYTES } from '../../src/outbound/client.ts';
import { OutboundRefused, OutboundTimeout, OutboundTooLarge } from '../../src/outbound/errors.ts';
import { loopbackNames } from '../support/loopback-names.ts';

// The one client for calls the server makes to other hosts, against local
// receivers: every test server listens on all local addresses (IPv4 and
// IPv6) and counts the TCP connections it accepts, so "refused" means no
// socket reached it at all, not even a TLS ClientHello.

interface Receiver {
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  /** Request lines and bodies received. */
  requests: { method: string; url: string; body: string }[];
  /** Connections that have closed, for "reading stopped". */
  closed: number;
  close(): Promise<void>;
}

async function startReceiver(answer: RequestListener = (_req, res) => res.end('ok')): Promise<Receiver> {
  const receiver = { connections: 0, closed: 0, requests: [] } as unknown as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.requests.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res);
    });
  });
  server.on('connection', (socket) => {
    receiver.connections += 1;
    socket.on('close', () => {
      receiver.closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  receiver.port = (server.address() as net.AddressInfo).port;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

let logged = '';
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _encoding, done) {
      logged += String(chunk);
      done();
    },
  }),
);

const clients: OutboundClient[] = [];
function fetcher(allowPrivate: boolean, caller: OutboundCaller = { trust: 'app' }, maxBodyBytes?: number) {
  const client = outboundClient({ allowPrivate, log, maxBodyBytes });
  clients.push(client);
  return client.fetcher(caller);
}

async function refusal(call: Promise<unknown>): Promise<OutboundRefused> {
  const err = await call.then(
    () => assert.fail('the call was not refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OutboundRefused, `expected OutboundRefused, got ${String(err)}`);
  return err;
}

/** Counts the sockets undici would open (net.connect for http, tls.connect for https), still opening them. */
function countSockets(): { count(): number } {
  const plain = mock.method(net, 'connect');
  const secure = mock.method(tls, 'connect');
  return { count: () => plain.mock.callCount() + secure.mock.callCount() };
}

describe('outbound client', () => {
  let receiver: Receiver;
  let names: string[];

  before(async () => {
    names = await loopbackNames();
  });
  beforeEach(async () => {
    logged = '';
    receiver = await startReceiver();
  });
  afterEach(async () => {
    mock.restoreAll();
    await receiver.close();
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  test('a host name that resolves to loopback is refused without a connection, over http and https', async () => {
    assert.ok(names.includes('localhost'));
    const call = fetcher(false);
    for (const name of names) {
      for (const scheme of ['http', 'https']) {
        const err = await refusal(call(`${scheme}://${name}:${receiver.port}/internal-admin?x=1`, { method: 'POST', body: 'logout_token=t' }));
        assert.equal(err.reason, 'loopback or private');
        assert.equal(err.host, name);
      }
    }
    assert.equal(receiver.connections, 0, 'no socket reached the receiver, not even a TLS ClientHello');
  });

  test('loopback and private IP literals, in every spelling, are refused before a socket is created', async () => {
    const sockets = countSockets();
    const call = fetcher(false);
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0', '2130706433', '0x7f.1', '[::]', '10.0.0.1', '192.168.1.1', '[fd00::1]']) {
      const err = await refusal(call(`http://${host}:${receiver.port}/`));
      assert.equal(err.reason, 'loopback or private', host);
    }
    await refusal(call(`https://127.0.0.1:${receiver.port}/`));
    assert.equal(sockets.count(), 0);
    assert.equal(receiver.connections, 0);
  });

  test('link-local and metadata addresses are refused without a socket even with OUTBOUND_ALLOW_PRIVATE, and for instance-level callers', async () => {
    const sockets = countSockets();
    for (const call of [fetcher(true), fetcher(false, { trust: 'instance' })]) {
      for (const url of [
        'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
        'http://[fd00:ec2::254]/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/',
        'http://[fe80::1]/',
        'http://100.100.100.200/latest/meta-data/',
      ]) {
        const err = await refusal(call(url));
        assert.equal(err.reason, 'link-local, metadata or multicast', url);
      }
    }
    assert.equal(sockets.count(), 0);
  });

  test('with OUTBOUND_ALLOW_PRIVATE an app reaches a loopback receiver, by address and by name', async () => {
    const call = fetcher(true);
    for (const host of ['127.0.0.1', '[::1]', ...names]) {
      const response = await call(`http://${host}:${receiver.port}/logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: 'token' }),
      });
      assert.equal(response.status, 200);
      assert.equal(await response.text(), 'ok');
    }
    assert.deepEqual(
      receiver.requests.map((r) => [r.method, r.url, r.body]),
      [...Array(2 + names.length)].map(() => ['POST', '/logout', 'logout_token=token']),
    );
  });

  test('an instance-level caller reaches a loopback receiver without OUTBOUND_ALLOW_PRIVATE; an app of the same client does not', async () => {
    const client = outboundClient({ allowPrivate: false, log });
    clients.push(client);
    assert.equal((await client.fetcher({ trust: 'instance' })(`http://localhost:${receiver.port}/`)).status, 200);
    await refusal(client.fetcher({ trust: 'app' })(`http://localhost:${receiver.port}/`));
    assert.equal(receiver.requests.length, 1);
  });

  test('a dispatcher handed in by the caller (the engine sets its own) is replaced by the checked one', async () => {
    const unchecked = new Agent();
    try {
      await refusal(fetcher(false)(`http://127.0.0.1:${receiver.port}/`, { dispatcher: unchecked } as RequestInit));
    } finally {
      await unchecked.close();
    }
    assert.equal(receiver.connections, 0);
  });

  test('only http and https are called', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://127.0.0.1:70/']) {
      const err = await refusal(fetcher(true)(url));
      assert.equal(err.reason, 'scheme');
    }
  });

  test('redirects are not followed: the 3xx comes back as it is', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` });
      res.end();
    });
    try {
      const response = await fetcher(true)(`http://127.0.0.1:${redirecting.port}/logout`, { method: 'POST', body: 'x=1', redirect: 'follow' });
      assert.equal(response.status, 302);
      assert.equal(response.headers.get('location'), `http://127.0.0.1:${target.port}/elsewhere`);
      assert.equal(target.connections, 0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });

  describe('time limit', () => {
    let silent: Receiver;
    let stalling: Receiver;
    before(async () => {
      silent = await startReceiver(() => {});
      stalling = await startReceiver((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      });
    });
    after(async () => {
      await Promise.all([silent.close(), stalling.close()]);
    });

    test('a receiver that never answers ends in OutboundTimeout at the caller timeout', async () => {
      const started = Date.now();
      await assert.rejects(fetcher(true, { trust: 'app', timeoutMs: 300 })(`http://127.0.0.1:${silent.port}/`), OutboundTimeout);
      const took = Date.now() - started;
      assert.ok(took >= 290 && took < 2000, `took ${took} ms`);
    });

    test('the deadline covers the body: one that stops half-way ends in OutboundTimeout', async () => {
      const response = await fetcher(true, { trust: 'app', timeoutMs: 300 })(`http://127.0.0.1:${stalling.port}/`);
      assert.equal(response.status, 200);
      await assert.rejects(response.text(), OutboundTimeout);
    });

    test("the caller's own signal (the engine's 2.5 s) still ends the call first", async () => {
      const started = Date.now();
      await assert.rejects(fetcher(true)(`http://127.0.0.1:${silent.port}/`, { signal: AbortSignal.timeout(200) }), OutboundTimeout);
      assert.ok(Date.now() - started < 2000);
    });

    test('the default limit is 5 s', async () => {
      const started = Date.now();
      await assert.rejects(fetcher(true)(`http://127.0.0.1:${silent.port}/`), OutboundTimeout);
      const took = Date.now() - started;
      assert.ok(took >= 4900 && took < 7000, `took ${took} ms`);
    });
  });

  describe('size limit (1 MiB of body)', () => {
    const body = (size: number) => Buffer.alloc(size, 'a');

    test('a body of exactly the limit is read whole', async () => {
      const sized = await startReceiver((_req, res) => res.end(body(MAX_BODY_BYTES)));
      try {
        const response = await fetcher(true)(`http://127.0.0.1:${sized.port}/`);
        assert.equal((await response.arrayBuffer()).byteLength, MAX_BODY_BYTES);
      } finally {
        await sized.close();
      }
    });

    test('a Content-Length past the limit is refused before the body is read', async () => {
      const large = await startReceiver((_req, res) => res.end(body(MAX_BODY_BYTES + 1)));
      try {
        await assert.rejects(fetcher(true)(`http://127.0.0.1:${large.port}/`), OutboundTooLarge);
      } finally {
        await large.close();
      }
    });

    test('a chunked body past the limit errors while read, and the connection is dropped', async () => {
      let sent = 0;
      const endless = await startReceiver((_req, res) => {
        res.writeHead(200);
        const more = () => {
          while (res.write(body(64 * 1024))) sent += 64 * 1024;
          sent += 64 * 1024;
          if (sent < 64 * MAX_BODY_BYTES) res.once('drain', more);
        };
        more();
      });
      try {
        const response = await fetcher(true)(`http://127.0.0.1:${endless.port}/`);
        await assert.rejects(response.text(), OutboundTooLarge);
        const deadline = Date.now() + 2000;
        while (endless.closed < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(endless.closed, 1, 'reading stopped: the client closed the connection');
        assert.ok(sent < 16 * MAX_BODY_BYTES, `the receiver sent ${sent} bytes before the client stopped reading`);
      } finally {
        await endless.close();
      }
    });

    test('the limit counts the decoded body: a small gzip of a large body errors too', async () => {
      const bomb = gzipSync(body(4 * MAX_BODY_BYTES));
      assert.ok(bomb.length < MAX_BODY_BYTES / 100);
      const zipped = await startReceiver((_req, res) => {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': bomb.length });
        res.end(bomb);
      });
      try {
        const response = await fetcher(true)(`http://127.0.0.1:${zipped.port}/`);
        await assert.rejects(response.arrayBuffer(), OutboundTooLarge);
      } finally {
        await zipped.close();
      }
    });
  });

  test('a failure is logged with its host and kind, never the path, query or body', async () => {
    await refusal(fetcher(false)(`http://127.0.0.1:${receiver.port}/internal-admin?secret=s3cr3t`, { method: 'POST', body: 'logout_token=eyJ' }));
    const line = JSON.parse(logged.trim().split('\n').at(-1)!);
    assert.equal(line.msg, 'outbound call failed');
    assert.equal(line.host, `127.0.0.1:${receiver.port}`);
    assert.equal(line.error, 'refused');
    assert.equal(line.trust, 'app');
    for (const leak of ['internal-admin', 's3cr3t', 'eyJ']) assert.ok(!logged.includes(leak), `${leak} in the log`);
  });
});
