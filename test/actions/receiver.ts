import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { selfSignedLocalhost } from '../support/tls-proxy.ts';
import { tempDir } from '../support/server.ts';

// An HTTPS receiver of action calls for tests: it checks the signature of
// every request as docs/actions.md tells a receiver to (the test fails on
// one that does not verify), keeps what arrived, and answers what the test
// says. Its certificate is self-signed for localhost: `trustInThisProcess`
// makes a server started in this process trust it, `caFile` is for
// NODE_EXTRA_CA_CERTS of a spawned one.

export interface Delivery {
  body: any;
  raw: string;
  t: number;
  at: number;
}

/** A status (the body `{}`), a status with its body, or no answer at all. */
export type Answer = number | { status: number; body: string } | 'hang';

export interface Receiver {
  /** https://localhost:PORT/hook */
  url: string;
  /** Every request, whatever it was answered. */
  attempts: Delivery[];
  /** The requests answered with a 2xx, in order of arrival. */
  deliveries: Delivery[];
  /** Every signature checked so far, good or bad; bad ones are kept in `badSignatures`. */
  checked: number;
  badSignatures: string[];
  /** The key to check signatures with (known once the target is created). */
  key: string;
  /** Decides the answer to each request (default 200 with `{}`); `'hang'` never answers, until the caller hangs up. */
  answer: (delivery: Delivery) => Answer | Promise<Answer>;
  /** Stops listening; `start` listens again on the same port. */
  pause(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

let tls: { key: Buffer; cert: Buffer; caFile: string } | undefined;

/** The receivers' certificate and key, made once per test process. */
export function receiverTls(): { key: Buffer; cert: Buffer; caFile: string } {
  if (!tls) {
    const made = selfSignedLocalhost();
    const caFile = join(tempDir('portcullis-ca-'), 'ca.pem');
    writeFileSync(caFile, made.cert);
    tls = { ...made, caFile };
  }
  return tls;
}

/** Outbound calls from this process trust the receivers' certificate too. */
export function trustInThisProcess(): void {
  setDefaultCACertificates([...getCACertificates('default'), receiverTls().cert.toString()]);
}

/** docs/actions.md's check: `t=<unix>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>`, compared in constant time. */
export function verifySignature(header: string | undefined, body: string, key: string): number | undefined {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return undefined;
  const expected = createHmac('sha256', key).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex')) ? Number(match[1]) : undefined;
}

export async function startReceiver(): Promise<Receiver> {
  const { key, cert } = receiverTls();
  let port = 0;
  let server: Server | undefined;
  const receiver: Receiver = {
    url: '',
    attempts: [],
    deliveries: [],
    checked: 0,
    badSignatures: [],
    key: '',
    answer: () => 200,
    async start() {
      const listening = createServer({ key, cert }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', async () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const t = verifySignature(req.headers['portcullis-signature'] as string | undefined, raw, receiver.key);
          receiver.checked += 1;
          if (t === undefined) receiver.badSignatures.push(String(req.headers['portcullis-signature']));
          const delivery: Delivery = { body: JSON.parse(raw), raw, t: t ?? 0, at: Date.now() };
          receiver.attempts.push(delivery);
          const answer = await receiver.answer(delivery);
          if (answer === 'hang') return;
          const { status, body } = typeof answer === 'number' ? { status: answer, body: '{}' } : answer;
          if (status >= 200 && status < 300) receiver.deliveries.push(delivery);
          res.writeHead(status, { 'content-type': 'application/json' }).end(body);
        });
      });
      await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
      port = (listening.address() as AddressInfo).port;
      receiver.url = `https://localhost:${port}/hook`;
      server = listening;
    },
    async pause() {
      const current = server;
      server = undefined;
      if (!current) return;
      current.closeAllConnections();
      await new Promise<void>((resolve) => current.close(() => resolve()));
    },
    close: () => receiver.pause(),
  };
  await receiver.start();
  return receiver;
}

/** Waits for `done` (polling, no timing assertion): fails with `what` after `timeoutMs`. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
