import assert from 'node:assert/strict';
import { assertErrorBody } from './assertions.ts';

// HTTP for tests: requests that fail the test on any 5xx (docs/api/README.md:
// caller mistakes are 4xx, never 500), JSON calls of the admin/management API with a
// bearer token, and assertions on the error body of docs/api/README.md.

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The body as sent, to assert on what it must never contain. */
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  body: any;
  /** The same as `body`. */
  json: any;
}

/** An answer as it was on the wire (the body is read; nothing is asserted). */
export async function readResponse(response: Response): Promise<ApiResponse> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body, json: body };
}

export interface RequestOptions {
  /** Fail the test when a non-empty body is not JSON. */
  strictJson?: boolean;
  /** Assert the error body of docs/api/README.md on every 4xx answer. */
  errorBody?: boolean;
}

/** A request, not following redirects unless `init` says so, that must never be answered with a 5xx. */
export async function request(url: string, init: RequestInit = {}, options: RequestOptions = {}): Promise<ApiResponse> {
  const answer = await readResponse(await fetch(url, { redirect: 'manual', ...init }));
  const what = `${init.method ?? 'GET'} ${url}`;
  assert.ok(answer.status < 500, `${what} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  if (options.strictJson) assert.ok(answer.text === '' || answer.body !== undefined, `${what} answered a body that is not JSON: ${answer.text.slice(0, 500)}`);
  if (options.errorBody && answer.status >= 400) assertErrorBody(answer);
  return answer;
}

export interface CallOptions {
  /** Bearer token; default: the client's; null: no Authorization header. */
  token?: string | null;
  /** Sent as JSON. */
  body?: unknown;
  /** Raw body text, sent as application/json unless `contentType` says otherwise. */
  raw?: string;
  contentType?: string;
  /** `x-service-orgid`; default: the client's, if any. */
  orgId?: string;
  headers?: Record<string, string>;
}

/** A JSON call of the admin/management API; never answered with a 5xx. */
export type Api = (method: string, path: string, options?: CallOptions) => Promise<ApiResponse>;

export interface ApiClientOptions {
  /** `x-service-orgid` of every call that names none. */
  orgId?: string;
  /** Fail the test on any answer whose body is not JSON. */
  strictJson?: boolean;
}

/** JSON calls to the admin/management API at `baseUrl` with `token` as the default bearer token. */
export function apiClient(baseUrl: string, token: string, defaults: ApiClientOptions = {}): Api {
  return (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const bearer = options.token === undefined ? token : options.token;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    const orgId = options.orgId ?? defaults.orgId;
    if (orgId !== undefined) headers['x-service-orgid'] = orgId;
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    return request(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) }, { strictJson: defaults.strictJson });
  };
}

/** `Basic` credentials of client_secret_basic (RFC 6749 2.3.1: form-encoded, then base64). */
export function basicHeader(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/**
 * One HTTP call, following redirects. Every answer of the admin API is
 * checked to be no 500 (caller mistakes are 4xx, never 500) and, when it is
 * an error, to carry the documented error body.
 */
export function call(url: string, init: RequestInit = {}): Promise<ApiResponse> {
  return request(url, { redirect: 'follow', ...init }, { errorBody: true });
}
