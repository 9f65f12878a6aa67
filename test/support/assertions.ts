import assert from 'node:assert/strict';
import type { ApiResponse } from './api.ts';

// What the admin and management API answers look like (docs/api/README.md):
// the error body, its field violations, write details.

/** `{code: integer, message: string, details: [{'@type': string}]}`. */
export function assertErrorBody(response: ApiResponse, code?: number): void {
  const { body } = response;
  assert.ok(
    body && typeof body === 'object' && !Array.isArray(body),
    `error body is not a JSON object (HTTP ${response.status}): ${response.text.slice(0, 300)}`,
  );
  assert.equal(typeof body.code, 'number', `error body has no numeric code: ${response.text.slice(0, 300)}`);
  assert.ok(Number.isInteger(body.code));
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.details), 'error body has no details array');
  for (const detail of body.details) assert.equal(typeof detail['@type'], 'string');
  if (code !== undefined) assert.equal(body.code, code, `expected code ${code}, got ${body.code}: ${body.message}`);
}

/** The fields named by the `google.rpc.BadRequest` detail of a 400. */
export function violatedFields(response: ApiResponse): string[] {
  const detail = (response.body?.details ?? []).find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  return (detail?.fieldViolations ?? []).map((v: { field: string }) => v.field);
}

/** The `reason` of the `google.rpc.ErrorInfo` detail of an error, if it has one. */
export function errorReason(response: ApiResponse): string | undefined {
  const detail = (response.body?.details ?? []).find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
  return detail?.reason;
}

/**
 * A 400 with code 3 whose field violations name `fields`: exactly these (in
 * any order), or with `{ atLeast: true }` these among others.
 */
export function assertInvalid(response: ApiResponse, fields: string[], options: { atLeast?: boolean; what?: string } = {}): void {
  const what = options.what ? `${options.what}: ` : '';
  assert.equal(response.status, 400, `${what}expected 400, got ${response.status} ${response.text.slice(0, 300)}`);
  assertErrorBody(response, 3);
  const named = violatedFields(response);
  if (options.atLeast) {
    for (const field of fields) assert.ok(named.includes(field), `${what}expected a violation of ${field}, got ${JSON.stringify(named)}`);
  } else {
    assert.deepEqual(named.sort(), [...fields].sort(), `${what}fields named in ${response.text.slice(0, 500)}`);
  }
}

/** The error status and its gRPC code. */
export function assertError(response: ApiResponse, status: 401 | 403 | 404 | 409): void {
  const codes = { 401: 16, 403: 7, 404: 5, 409: 6 };
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, codes[status]);
}

/** A write's `details`, owned by `resourceOwner`. */
export function assertDetails(details: any, resourceOwner: string): void {
  assert.match(details.sequence, /^\d+$/);
  assert.ok(!Number.isNaN(Date.parse(details.creationDate)));
  assert.ok(!Number.isNaN(Date.parse(details.changeDate)));
  assert.equal(details.resourceOwner, resourceOwner);
}
