import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { freePort, tempDir } from './server.ts';

// A TLS-terminating proxy for tests, as in front of a production node
// (docs/operations.md): https on 127.0.0.1 with a self-signed certificate for
// localhost (made with the openssl command), forwarding to a test server's
// plain http port with X-Forwarded-For. Browsers in these tests accept the
// certificate with ignoreHTTPSErrors.

export interface TlsProxy {
  /** https://localhost:PORT, to use as the test server's ISSUER. */
  origin: string;
  port: number;
  /** Starts forwarding to the test server's http port (known once it runs). */
  forwardTo(backendPort: number): void;
  close(): Promise<void>;
}

export function selfSignedLocalhost(): { key: Buffer; cert: Buffer } {
  const dir = tempDir('portcullis-tls-');
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startTlsProxy(): Promise<TlsProxy> {
  const port = await freePort();
  let backend = 0;
  const server: Server = createServer(selfSignedLocalhost(), (req, res) => {
    const upstream = request(
      { host: '127.0.0.1', port: backend, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress ?? '' } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `https://localhost:${port}`,
    port,
    forwardTo(backendPort) {
      backend = backendPort;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
