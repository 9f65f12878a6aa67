import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

// The HTTP client of the CLI: one JSON call with the PAT as bearer token.
// node:http rather than fetch, so that every port works (fetch refuses some)
// and a connection failure names its cause.

/** An answer of the API that is not 2xx: the status and the parsed body (the error body of docs/api/README.md when JSON). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, statusText: string, body: unknown, text: string) {
    const message = isObject(body) && typeof body.message === 'string' ? body.message : `HTTP ${status} ${statusText}${text ? `: ${firstLine(text)}` : ''}`;
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** The server could not be reached or did not answer. */
export class NetworkError extends Error {}

export interface Connection {
  /** Base URL, e.g. http://localhost:8080 (no trailing slash). */
  url: string;
  pat: string;
  /** Sent as x-service-orgid when set. */
  org?: string;
  timeoutMs?: number;
}

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]!.slice(0, 200);
}

/** Sends one request; resolves with the parsed JSON body of a 2xx answer, else rejects with ApiError / NetworkError. */
export function callApi(connection: Connection, method: string, path: string, body?: unknown): Promise<unknown> {
  const target = new URL(connection.url.replace(/\/+$/, '') + path);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${connection.pat}` };
  if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
  if (connection.org) headers['x-service-orgid'] = connection.org;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const where = target.origin;

  return new Promise((resolve, reject) => {
    const req = send(target, { method, headers, timeout: connection.timeoutMs ?? 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => reject(new NetworkError(`connection to ${where} failed: ${err.message}`)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : {};
        } catch {
          parsed = undefined;
        }
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300 && parsed !== undefined) resolve(parsed);
        else if (status >= 200 && status < 300) reject(new NetworkError(`${where} answered HTTP ${status} without a JSON body`));
        else reject(new ApiError(status, res.statusMessage ?? '', parsed, parsed === undefined ? text : ''));
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err: NodeJS.ErrnoException) => reject(new NetworkError(`cannot reach ${where}: ${err.code ?? err.message}`)));
    req.end(payload);
  });
}
