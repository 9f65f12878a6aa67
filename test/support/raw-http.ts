import { connect } from 'node:net';

// Requests written byte by byte on a socket: fetch and node:http refuse to
// send much of what a hostile client sends (raw NUL or non-ASCII bytes in the
// path, unknown methods, malformed header values), so the hostile-input tests
// write HTTP/1.1 themselves.

export interface RawRequest {
  method: string;
  /** The request target exactly as sent, in bytes (latin1). */
  target: Buffer;
  headers: Array<[string, Buffer]>;
  body?: Buffer;
}

export interface RawAnswer {
  /** Status code of the response's status line. */
  status: number;
  headers: string;
  body: Buffer;
}

export class RawTimeout extends Error {
  override name = 'RawTimeout';
}

/** Sends one request on a new connection (closed after the answer) and reads the whole answer. */
export function sendRaw(port: number, request: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new RawTimeout(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      // The server may close the connection after answering, before it read
      // the whole body (a body over the limit): the answer is what counts.
      if (chunks.length) settle();
      else reject(err);
    });
    socket.on('close', () => settle());
    let settled = false;
    function settle(): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      const head = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (!match) {
        reject(new Error(`no HTTP status line in the answer: ${JSON.stringify(head.slice(0, 200))}`));
        return;
      }
      resolve({ status: Number(match[1]), headers: head, body: end < 0 ? Buffer.alloc(0) : raw.subarray(end + 4) });
    }
    const lines = [
      Buffer.from(`${request.method} `, 'latin1'),
      request.target,
      Buffer.from(` HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n`, 'latin1'),
    ];
    for (const [name, value] of request.headers) lines.push(Buffer.from(`${name}: `, 'latin1'), value, Buffer.from('\r\n', 'latin1'));
    if (request.body) lines.push(Buffer.from(`Content-Length: ${request.body.length}\r\n`, 'latin1'));
    lines.push(Buffer.from('\r\n', 'latin1'));
    if (request.body) lines.push(request.body);
    socket.write(Buffer.concat(lines));
  });
}
